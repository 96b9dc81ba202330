/*
 * ompi_which: an LD_PRELOAD shim that prints, on rank 0, which of Open MPI's
 * allreduce algorithms coll/tuned calls, to learn what the library's fixed
 * decision picks for a communicator and message size (docs/tuning.md,
 * "Allreduce"). coll/tuned (mca_coll_tuned.so) calls the algorithms of
 * libmpi through the dynamic linker, so a preloaded library sees the call;
 * each wrapper forwards its integer-class arguments unchanged (x86-64: the
 * first six in registers, the rest on the stack, all 8 bytes wide).
 *
 *   gcc -shared -fPIC -O1 -o ompi_which.so tools/mpibench/ompi_which.c -ldl
 *   mpirun -n 60 --oversubscribe -x LD_PRELOAD=$PWD/ompi_which.so \
 *       ./collbench allreduce 65536,1048576,16777216 0 1 2>&1 | grep ompi_which
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

typedef int (*fn)(long, long, long, long, long, long, long, long);

#define WHICH(name)                                                                   \
	int name(long a, long b, long c, long d, long e, long f, long g, long h)          \
	{                                                                                 \
		static fn real;                                                               \
		const char *r = getenv("OMPI_COMM_WORLD_RANK");                               \
		if (!real)                                                                    \
			real = (fn)dlsym(RTLD_NEXT, #name);                                       \
		if (r && atoi(r) == 0)                                                        \
			fprintf(stderr, "ompi_which %s count=%ld\n", #name, c);                   \
		return real(a, b, c, d, e, f, g, h);                                          \
	}

WHICH(ompi_coll_base_allreduce_intra_basic_linear)
WHICH(ompi_coll_base_allreduce_intra_nonoverlapping)
WHICH(ompi_coll_base_allreduce_intra_recursivedoubling)
WHICH(ompi_coll_base_allreduce_intra_redscat_allgather)
WHICH(ompi_coll_base_allreduce_intra_ring)
WHICH(ompi_coll_base_allreduce_intra_ring_segmented)
