/*
 * reducebench: times MPI_Reduce (MPI_SUM over doubles to rank 0), the
 * counterpart of tools/reducebench (netaware's Reduce over TCP). Force the
 * tree with Open MPI's tuned component, e.g. the binomial tree:
 *
 *   mpirun -n 8 --mca coll_tuned_use_dynamic_rules 1 \
 *       --mca coll_tuned_reduce_algorithm 5 reducebench BYTES [WARMUP [REPS]]
 *
 * Every repetition starts after a barrier; its time is the slowest rank's.
 * Rank 0 prints one line per repetition and a summary line, as collbench:
 *
 *   rep 0 0.123456
 *   result op=reduce bytes=1048576 ranks=8 reps=9 median_s=... min_s=... max_s=...
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
	int rank, size;
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	long long bytes = argc > 1 ? atoll(argv[1]) : 0;
	int warmup = argc > 2 ? atoi(argv[2]) : 2;
	int reps = argc > 3 ? atoi(argv[3]) : 9;
	if (bytes < 8 || bytes % 8 != 0 || bytes > (1LL << 31) || warmup < 0 || reps < 1 || reps > 100000) {
		if (rank == 0)
			fprintf(stderr, "usage: reducebench BYTES (a multiple of 8) [WARMUP [REPS]]\n");
		MPI_Finalize();
		return 2;
	}
	int count = (int)(bytes / 8);
	double *in = malloc((size_t)count * sizeof(double));
	double *out = malloc((size_t)count * sizeof(double));
	double *times = malloc((size_t)reps * sizeof(double));
	if (!in || !out || !times) {
		fprintf(stderr, "reducebench: rank %d: out of memory\n", rank);
		MPI_Abort(MPI_COMM_WORLD, 1);
	}
	for (int i = 0; i < count; i++)
		in[i] = rank + 1;
	double want = (double)size * (size + 1) / 2;
	for (int it = 0; it < warmup + reps; it++) {
		MPI_Barrier(MPI_COMM_WORLD);
		double t0 = MPI_Wtime();
		MPI_Reduce(in, out, count, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
		double t = MPI_Wtime() - t0, tmax;
		MPI_Reduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
		if (rank != 0)
			continue;
		if (out[0] != want || out[count - 1] != want) {
			fprintf(stderr, "reducebench: wrong result %g ... %g, want %g\n", out[0], out[count - 1], want);
			MPI_Abort(MPI_COMM_WORLD, 1);
		}
		if (it >= warmup) {
			times[it - warmup] = tmax;
			printf("rep %d %.6f\n", it - warmup, tmax);
		}
	}
	if (rank == 0) {
		qsort(times, (size_t)reps, sizeof(double), cmp_double);
		double median = reps % 2 ? times[reps / 2] : (times[reps / 2 - 1] + times[reps / 2]) / 2;
		printf("result op=reduce bytes=%lld ranks=%d reps=%d median_s=%.6f min_s=%.6f max_s=%.6f\n",
		       bytes, size, reps, median, times[0], times[reps - 1]);
	}
	free(in);
	free(out);
	free(times);
	MPI_Finalize();
	return 0;
}
