/*
 * sagtrace: Open MPI's scatter_allgather broadcast (binomial scatter, then
 * recursive-doubling allgather; coll_base_bcast.c) written out with MPI
 * point-to-point calls, printing when each send and receive completes. On
 * an emulated cluster ('netaware emu') every rank runs on one machine and
 * reads one clock, so the times of different ranks line up: what the real
 * run does message by message, to set beside the simulator's event log
 * (sim.Options.EventLog). docs/validation.md, sixteenth session.
 *
 *   mpirun ... sagtrace [BYTES [REPS]]      (default 1048576 bytes, 5 repetitions)
 *
 * Root 0, a power-of-two number of ranks, BYTES a multiple of it. One
 * warm-up; then per repetition every rank's lines, "rep R t=SECONDS
 * EVENT", in rank order, and "rep R total SECONDS" (the slowest rank).
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec * 1e-9;
}

#define MAXEV 64

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	int v, p;
	MPI_Comm_rank(MPI_COMM_WORLD, &v);
	MPI_Comm_size(MPI_COMM_WORLD, &p);
	int n = argc > 1 ? atoi(argv[1]) : 1 << 20, reps = argc > 2 ? atoi(argv[2]) : 5;
	if ((p & (p - 1)) != 0 || n <= 0 || n % p != 0 || reps < 1) {
		if (v == 0)
			fprintf(stderr, "sagtrace: want a power-of-two number of ranks (not %d) and BYTES a positive multiple of it (not %d)\n", p, n);
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	char *buf = malloc(n);
	int sc = n / p;
	char what[MAXEV][64];
	double when[MAXEV];
	for (int rep = 0; rep <= reps; rep++) {
		int ne = 0, mask = 1, cur = v == 0 ? n : 0;
		MPI_Barrier(MPI_COMM_WORLD);
		double start = now();
		while (mask < p) { /* scatter: receive my subtree's blocks from the parent */
			if (v & mask) {
				cur = n - v * sc < mask * sc ? n - v * sc : mask * sc;
				MPI_Recv(buf + v * sc, cur, MPI_BYTE, v - mask, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
				snprintf(what[ne], 64, "recv scatter %d<-%d %d", v, v - mask, cur);
				when[ne++] = now() - start;
				break;
			}
			mask <<= 1;
		}
		for (mask >>= 1; mask > 0; mask >>= 1) { /* and hand the children theirs */
			int s = cur - sc * mask;
			if (v + mask < p && s > 0) {
				MPI_Send(buf + (v + mask) * sc, s, MPI_BYTE, v + mask, 1, MPI_COMM_WORLD);
				snprintf(what[ne], 64, "sent scatter %d->%d %d", v, v + mask, s);
				when[ne++] = now() - start;
				cur -= s;
			}
		}
		for (mask = 1; mask < p; mask <<= 1) { /* allgather: swap subtrees' blocks */
			int r = v ^ mask, mine = v & ~(mask - 1), theirs = r & ~(mask - 1);
			MPI_Sendrecv(buf + mine * sc, mask * sc, MPI_BYTE, r, 2, buf + theirs * sc, mask * sc, MPI_BYTE, r, 2,
				     MPI_COMM_WORLD, MPI_STATUS_IGNORE);
			snprintf(what[ne], 64, "sendrecv %d<->%d %d", v, r, mask * sc);
			when[ne++] = now() - start;
		}
		double mine = now() - start, worst;
		MPI_Reduce(&mine, &worst, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
		if (rep == 0)
			continue;
		for (int r = 0; r < p; r++) {
			if (r == v)
				for (int i = 0; i < ne; i++)
					printf("rep %d t=%.4f %s\n", rep, when[i], what[i]);
			fflush(stdout);
			MPI_Barrier(MPI_COMM_WORLD);
		}
		if (v == 0)
			printf("rep %d total %.4f\n", rep, worst);
		fflush(stdout);
	}
	free(buf);
	MPI_Finalize();
	return 0;
}
