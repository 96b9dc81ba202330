/* coll_check: runs collectives given on the command line as OP:BYTES
 * (OP one of bcast scatter gather reduce allgather allreduce
 * reduce_scatter; BYTES the whole vector as tune counts it: P blocks for
 * the block collectives, 4-byte floats for the reductions) and checks the
 * result on every rank. Used by tune's MPI acceptance tests to make Open
 * MPI and MPICH read a rules file with several collectives and apply each
 * collective's rules. Errors are returned, not fatal: a collective that
 * fails prints "coll_check error OP BYTES" and ends the job, unless the
 * argument ends in '!' (OP:BYTES!), which expects the collective to return
 * an error on every rank (a rule naming an algorithm the library rejects)
 * and goes on. Prints "coll_check ok P=<ranks>" on rank 0 when every
 * expectation held. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int run(const char *op, long n, int rank, int p)
{
    long blk = n / p, cnt = n / 4, i;
    int rc = MPI_SUCCESS, bad = 0;
    unsigned char *a = malloc(n + 1), *b = malloc(n + 1);
    float *x = malloc(n + 4), *y = malloc(n + 4);
    for (i = 0; i < n; i++)
        a[i] = (unsigned char)(i * 7 + rank), b[i] = 0;
    for (i = 0; i < cnt; i++)
        x[i] = (float)(rank + 1), y[i] = 0;
    if (!strcmp(op, "bcast")) {
        rc = MPI_Bcast(a, (int)n, MPI_BYTE, 0, MPI_COMM_WORLD);
        for (i = 0; rc == MPI_SUCCESS && i < n; i++)
            bad |= a[i] != (unsigned char)(i * 7);
    } else if (!strcmp(op, "scatter")) {
        rc = MPI_Scatter(a, (int)blk, MPI_BYTE, b, (int)blk, MPI_BYTE, 0, MPI_COMM_WORLD);
        for (i = 0; rc == MPI_SUCCESS && i < blk; i++)
            bad |= b[i] != (unsigned char)((rank * blk + i) * 7);
    } else if (!strcmp(op, "gather")) {
        for (i = 0; i < blk; i++)
            a[i] = (unsigned char)(rank * 3 + i);
        rc = MPI_Gather(a, (int)blk, MPI_BYTE, b, (int)blk, MPI_BYTE, 0, MPI_COMM_WORLD);
        for (i = 0; rc == MPI_SUCCESS && rank == 0 && i < n; i++)
            bad |= b[i] != (unsigned char)((i / blk) * 3 + i % blk);
    } else if (!strcmp(op, "allgather")) {
        for (i = 0; i < blk; i++)
            a[i] = (unsigned char)(rank * 3 + i);
        rc = MPI_Allgather(a, (int)blk, MPI_BYTE, b, (int)blk, MPI_BYTE, MPI_COMM_WORLD);
        for (i = 0; rc == MPI_SUCCESS && i < n; i++)
            bad |= b[i] != (unsigned char)((i / blk) * 3 + i % blk);
    } else if (!strcmp(op, "reduce")) {
        rc = MPI_Reduce(x, y, (int)cnt, MPI_FLOAT, MPI_SUM, 0, MPI_COMM_WORLD);
        for (i = 0; rc == MPI_SUCCESS && rank == 0 && i < cnt; i++)
            bad |= y[i] != (float)(p * (p + 1) / 2);
    } else if (!strcmp(op, "allreduce")) {
        rc = MPI_Allreduce(x, y, (int)cnt, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
        for (i = 0; rc == MPI_SUCCESS && i < cnt; i++)
            bad |= y[i] != (float)(p * (p + 1) / 2);
    } else if (!strcmp(op, "reduce_scatter")) {
        int *counts = malloc(sizeof(int) * p);
        for (i = 0; i < p; i++)
            counts[i] = (int)(cnt / p);
        rc = MPI_Reduce_scatter(x, y, counts, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
        for (i = 0; rc == MPI_SUCCESS && i < cnt / p; i++)
            bad |= y[i] != (float)(p * (p + 1) / 2);
        free(counts);
    } else {
        if (rank == 0)
            fprintf(stderr, "coll_check: unknown collective %s\n", op);
        rc = MPI_ERR_ARG;
    }
    free(a), free(b), free(x), free(y);
    if (rc != MPI_SUCCESS) {
        printf("coll_check error %s %ld at rank %d\n", op, n, rank);
        return -1;
    }
    if (bad)
        printf("coll_check wrong result %s %ld at rank %d\n", op, n, rank);
    return bad;
}

int main(int argc, char **argv)
{
    int rank, p, i, bad = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &p);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    for (i = 1; i < argc; i++) {
        char op[64], bang = 0;
        long n;
        int r;
        if (sscanf(argv[i], "%63[a-z_]:%ld%c", op, &n, &bang) < 2 || n < 0 || (bang && bang != '!')) {
            if (rank == 0)
                fprintf(stderr, "coll_check: want OP:BYTES or OP:BYTES!, got %s\n", argv[i]);
            MPI_Finalize();
            return 2;
        }
        r = run(op, n, rank, p);
        if (bang && r == 0) {
            printf("coll_check unexpected success %s %ld at rank %d\n", op, n, rank);
            bad = 1;
        } else if (!bang && r) {
            /* The other ranks may wait in this collective: end the job. */
            fflush(stdout);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
    }
    {
        int anybad = 0;
        MPI_Allreduce(&bad, &anybad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
        bad = anybad;
    }
    if (rank == 0 && !bad)
        printf("coll_check ok P=%d\n", p);
    MPI_Finalize();
    return bad;
}
