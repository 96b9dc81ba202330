/*
 * collbench: times one MPI collective as the MPI library runs it, for
 * scripts/order-proof.sh (rank order on an emulated cluster) and
 * scripts/tune-proof.sh (tuned rules files against every fixed algorithm).
 *
 *   mpirun ... collbench OP BYTES[,BYTES...] [WARMUP [REPS]]
 *
 * Several sizes are measured one after the other in one run (one MPI
 * start-up for all of them), each with its own warm-up. REPS is for the
 * largest size; a smaller one gets more, as many as fit in about the same
 * time by the size ratio, at most 5 x REPS: small sizes are the noisy
 * ones.
 * OP is allreduce or reduce (MPI_SUM over floats, reduce to rank 0),
 * bcast (from rank 0), scatter, gather (root 0), allgather or
 * reduce_scatter (MPI_Reduce_scatter, equal counts); BYTES is the whole
 * vector, for the last four all ranks' blocks together (netaware tune's
 * message size; a size that is not a multiple of 4 x ranks is measured
 * rounded down to one, and the result line gives the size measured). The
 * algorithm is whatever the library picks or is told (Open MPI:
 * --mca coll_tuned_use_dynamic_rules 1 --mca coll_tuned_allreduce_algorithm 4).
 * Every repetition starts after a barrier; its time is the slowest rank's
 * (MPI_MAX over ranks), since a collective is done when its last rank is.
 * Rank 0 prints one line per repetition and a summary line:
 *
 *   hosts a1 a2 ...                      (each rank's processor name, in rank order)
 *   rep 0 0.123456
 *   result op=allreduce bytes=16777216 ranks=8 reps=5 median_s=... min_s=... max_s=... mean_s=...
 *
 * (one result line per size; rep lines carry the size as a third field
 * when several are given).
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static void usage(int rank, const char *msg)
{
	if (rank == 0)
		fprintf(stderr, "collbench: %s\nusage: collbench allreduce|bcast|reduce|scatter|gather|allgather|reduce_scatter BYTES[,BYTES...] [WARMUP [REPS]]\n", msg);
	MPI_Finalize();
	exit(2);
}

int main(int argc, char **argv)
{
	int rank, size;
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (argc < 3)
		usage(rank, "missing arguments");
	const char *op = argv[1];
	static const char *ops[] = {"allreduce", "bcast", "reduce", "scatter", "gather", "allgather", "reduce_scatter"};
	int kind = -1;
	for (int i = 0; i < 7; i++)
		if (strcmp(op, ops[i]) == 0)
			kind = i;
	if (kind < 0)
		usage(rank, "OP must be allreduce, bcast, reduce, scatter, gather, allgather or reduce_scatter");
	int blocked = kind >= 3;
	long long sizes[64];
	int nsizes = 0;
	long long maxbytes = 0;
	for (const char *p = argv[2];;) {
		char *end;
		long long b = strtoll(p, &end, 10);
		if (end == p || (*end != '\0' && *end != ',') || b < 4 || b > (1LL << 31) || nsizes == 64)
			usage(rank, "BYTES must be up to 64 comma-separated integers from 4 to 2^31");
		sizes[nsizes++] = b;
		if (b > maxbytes)
			maxbytes = b;
		if (*end == '\0')
			break;
		p = end + 1;
	}
	int warmup = argc > 3 ? atoi(argv[3]) : 1;
	int reps = argc > 4 ? atoi(argv[4]) : 5;
	if (warmup < 0 || reps < 1 || reps > 100000)
		usage(rank, "WARMUP must be >= 0 and REPS from 1 to 100000");

	char name[MPI_MAX_PROCESSOR_NAME];
	int len;
	memset(name, 0, sizeof name);
	MPI_Get_processor_name(name, &len);
	char *names = NULL;
	if (rank == 0)
		names = calloc((size_t)size, MPI_MAX_PROCESSOR_NAME);
	MPI_Gather(name, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, names, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, 0, MPI_COMM_WORLD);
	if (rank == 0) {
		printf("hosts");
		for (int r = 0; r < size; r++)
			printf(" %s", names + (size_t)r * MPI_MAX_PROCESSOR_NAME);
		printf("\n");
		fflush(stdout);
		free(names);
	}

	size_t maxcount = (size_t)(maxbytes / sizeof(float));
	float *in = malloc(maxcount * sizeof(float));
	float *out = malloc(maxcount * sizeof(float));
	double *times = malloc((size_t)reps * 5 * sizeof(double));
	int *counts = malloc((size_t)size * sizeof(int));
	if (!in || !out || !times || !counts) {
		fprintf(stderr, "collbench: rank %d: out of memory\n", rank);
		MPI_Abort(MPI_COMM_WORLD, 1);
	}
	int maxreps = reps;
	for (int k = 0; k < nsizes; k++) {
		int count = (int)(sizes[k] / sizeof(float));
		int blk = count / size; /* floats per rank of the block collectives */
		if (blocked)
			count = blk * size;
		if (count < 1 || (blocked && blk < 1))
			usage(rank, "BYTES too small for the block collectives on these ranks");
		for (int r = 0; r < size; r++)
			counts[r] = blk;
		long long scaled = (long long)maxreps * (maxbytes / sizes[k]);
		reps = scaled > 5LL * maxreps ? 5 * maxreps : (int)scaled;
		for (int i = 0; i < count; i++) {
			in[i] = (float)(rank + 1);
			out[i] = 0;
		}
		for (int it = 0; it < warmup + reps; it++) {
			MPI_Barrier(MPI_COMM_WORLD);
			double t0 = MPI_Wtime();
			switch (kind) {
			case 0: MPI_Allreduce(in, out, count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD); break;
			case 1: MPI_Bcast(rank == 0 ? in : out, count, MPI_FLOAT, 0, MPI_COMM_WORLD); break;
			case 2: MPI_Reduce(in, out, count, MPI_FLOAT, MPI_SUM, 0, MPI_COMM_WORLD); break;
			case 3: MPI_Scatter(in, blk, MPI_FLOAT, out, blk, MPI_FLOAT, 0, MPI_COMM_WORLD); break;
			case 4: MPI_Gather(in, blk, MPI_FLOAT, out, blk, MPI_FLOAT, 0, MPI_COMM_WORLD); break;
			case 5: MPI_Allgather(in, blk, MPI_FLOAT, out, blk, MPI_FLOAT, MPI_COMM_WORLD); break;
			case 6: MPI_Reduce_scatter(in, out, counts, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD); break;
			}
			double t = MPI_Wtime() - t0, tmax;
			MPI_Reduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
			/* The result is checked, so that a wrong reordering cannot
			   pass as a fast one. */
			float sum = (float)size * (size + 1) / 2, *got = out;
			int first = 0, last = count - 1, bad = 0, anybad;
			switch (kind) {
			case 0: bad = got[first] != sum || got[last] != sum; break;
			case 1: got = rank == 0 ? in : out; bad = got[first] != 1.0f || got[last] != 1.0f; break;
			case 2: bad = rank == 0 && (got[first] != sum || got[last] != sum); break;
			/* scatter: every rank gets the root's 1s; gather and
			   allgather: block r holds r + 1; reduce_scatter: sums. */
			case 3: bad = got[0] != 1.0f || got[blk - 1] != 1.0f; break;
			case 4: bad = rank == 0 && (got[0] != 1.0f || got[last] != (float)size); break;
			case 5: bad = got[0] != 1.0f || got[last] != (float)size; break;
			case 6: bad = got[0] != sum || got[blk - 1] != sum; break;
			}
			MPI_Allreduce(&bad, &anybad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
			if (anybad) {
				if (rank == 0)
					fprintf(stderr, "collbench: %s of %lld bytes gave a wrong result\n", op, sizes[k]);
				MPI_Abort(MPI_COMM_WORLD, 1);
			}
			if (rank == 0 && it >= warmup) {
				times[it - warmup] = tmax;
				if (nsizes > 1)
					printf("rep %d %.6f %lld\n", it - warmup, tmax, (long long)count * (long long)sizeof(float));
				else
					printf("rep %d %.6f\n", it - warmup, tmax);
				fflush(stdout);
			}
		}
		if (rank == 0) {
			double sum = 0;
			for (int i = 0; i < reps; i++)
				sum += times[i];
			qsort(times, (size_t)reps, sizeof(double), cmp_double);
			double median = reps % 2 ? times[reps / 2] : (times[reps / 2 - 1] + times[reps / 2]) / 2;
			printf("result op=%s bytes=%lld ranks=%d reps=%d median_s=%.6f min_s=%.6f max_s=%.6f mean_s=%.6f\n",
			       op, (long long)count * (long long)sizeof(float), size, reps, median, times[0], times[reps - 1], sum / reps);
			fflush(stdout);
		}
	}
	free(in);
	free(out);
	free(times);
	free(counts);
	MPI_Finalize();
	return 0;
}
