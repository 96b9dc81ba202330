/*
 * pingpong: ping-pong latency and streaming bandwidth between ranks 0 and 1
 * as the MPI library runs them, the same patterns as 'netaware bench
 * pingpong' (comm/pingpong), for scripts/shm-bench.sh.
 *
 *   mpirun -n 2 ... pingpong SIZES [ITERS [STREAM_BYTES STREAM_COUNT]]
 *
 * SIZES is a comma-separated list of byte counts. Each size runs
 * max(10, ITERS*1024/max(size,1024)) ping-pongs (default ITERS 1000)
 * after a tenth as many untimed ones; the stream sends STREAM_COUNT
 * messages of STREAM_BYTES (default 1 MiB x 200) and rank 1 acknowledges
 * the last. Rank 0 prints one line per size and one for the stream:
 *
 *   size 1048576 iters 10 half_rtt_s 0.000123
 *   stream 1048576 count 200 Bps 4.5e9
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static double pingpong(int rank, char *buf, int n, int iters)
{
	double start = 0;
	for (int i = -iters / 10; i < iters; i++) {
		if (i == 0)
			start = MPI_Wtime();
		if (rank == 0) {
			MPI_Send(buf, n, MPI_BYTE, 1, 0, MPI_COMM_WORLD);
			MPI_Recv(buf, n, MPI_BYTE, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		} else {
			MPI_Recv(buf, n, MPI_BYTE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
			MPI_Send(buf, n, MPI_BYTE, 0, 0, MPI_COMM_WORLD);
		}
	}
	return MPI_Wtime() - start;
}

int main(int argc, char **argv)
{
	int rank, size;
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (argc < 2 || size < 2) {
		if (rank == 0)
			fprintf(stderr, "usage: mpirun -n 2 pingpong SIZES [ITERS [STREAM_BYTES STREAM_COUNT]]\n");
		MPI_Finalize();
		return 2;
	}
	int iters = argc > 2 ? atoi(argv[2]) : 1000;
	long sbytes = argc > 4 ? atol(argv[3]) : 1 << 20;
	int scount = argc > 4 ? atoi(argv[4]) : 200;
	if (iters < 1 || sbytes < 1 || scount < 1) {
		if (rank == 0)
			fprintf(stderr, "pingpong: ITERS, STREAM_BYTES and STREAM_COUNT must be positive\n");
		MPI_Finalize();
		return 2;
	}
	long maxn = sbytes;
	char *list = strdup(argv[1]);
	for (char *t = strtok(list, ","); t; t = strtok(NULL, ","))
		if (atol(t) > maxn)
			maxn = atol(t);
	free(list);
	char *buf = calloc(maxn ? maxn : 1, 1);
	if (rank <= 1) {
		list = strdup(argv[1]);
		for (char *t = strtok(list, ","); t; t = strtok(NULL, ",")) {
			int n = atoi(t);
			int it = iters * 1024 / (n > 1024 ? n : 1024);
			if (it < 10)
				it = 10;
			double d = pingpong(rank, buf, n, it);
			if (rank == 0)
				printf("size %d iters %d half_rtt_s %.9f\n", n, it, d / (2.0 * it));
		}
		free(list);
		char ack = 0;
		pingpong(rank, &ack, 1, 1);
		double start = MPI_Wtime();
		for (int i = 0; i < scount; i++) {
			if (rank == 0)
				MPI_Send(buf, (int)sbytes, MPI_BYTE, 1, 0, MPI_COMM_WORLD);
			else
				MPI_Recv(buf, (int)sbytes, MPI_BYTE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		}
		if (rank == 0)
			MPI_Recv(&ack, 1, MPI_BYTE, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		else
			MPI_Send(&ack, 1, MPI_BYTE, 0, 0, MPI_COMM_WORLD);
		double d = MPI_Wtime() - start;
		if (rank == 0)
			printf("stream %ld count %d Bps %.6g\n", sbytes, scount, (double)sbytes * scount / d);
	}
	free(buf);
	MPI_Finalize();
	return 0;
}
