/* bcast_check: broadcasts messages of the sizes given on the command line
 * (bytes) from rank 0 and checks every byte on every rank. Used by tune's
 * MPI acceptance tests to make Open MPI and MPICH read and apply the rule
 * files netaware writes. Prints "bcast_check ok P=<ranks>" on rank 0. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    int rank, size, i, bad = 0, allbad = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    for (i = 1; i < argc; i++) {
        long n = strtol(argv[i], NULL, 10), k;
        unsigned char *buf;
        if (n < 0) n = 0;
        buf = malloc(n > 0 ? n : 1);
        for (k = 0; k < n; k++)
            buf[k] = rank == 0 ? (unsigned char)(k * 7 + 3) : 0;
        MPI_Bcast(buf, (int)n, MPI_BYTE, 0, MPI_COMM_WORLD);
        for (k = 0; k < n; k++)
            if (buf[k] != (unsigned char)(k * 7 + 3)) {
                bad++;
                break;
            }
        free(buf);
    }
    MPI_Reduce(&bad, &allbad, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        if (allbad == 0)
            printf("bcast_check ok P=%d\n", size);
        else
            printf("bcast_check FAILED on %d broadcasts\n", allbad);
    }
    MPI_Finalize();
    return allbad != 0;
}
