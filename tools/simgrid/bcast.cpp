// bcast: a binomial-tree broadcast (MPICH's algorithm, root 0) of S bytes
// over hosts r0..r{N-1} of a SimGrid platform, for comparing SimGrid's speed
// and result with netaware's simulator (see docs/simulator.md).
//
// Usage: bcast PLATFORM.xml N BYTES [--cfg=...]; prints the virtual time and
// the wall-clock and CPU seconds of the simulation proper (platform loading
// excluded).
#include <simgrid/s4u.hpp>

#include <chrono>
#include <cstdio>
#include <ctime>
#include <cstdlib>
#include <string>

namespace sg4 = simgrid::s4u;

static int nranks;
static double nbytes;
static char token;

static void rank_main(int me)
{
  int mask = 1;
  while (mask < nranks) {
    if (me & mask) {
      sg4::Mailbox::by_name("mb" + std::to_string(me))->get<char>();
      break;
    }
    mask <<= 1;
  }
  for (mask >>= 1; mask > 0; mask >>= 1)
    if (me + mask < nranks)
      sg4::Mailbox::by_name("mb" + std::to_string(me + mask))->put(&token, static_cast<uint64_t>(nbytes));
}

int main(int argc, char** argv)
{
  sg4::Engine e(&argc, argv);
  if (argc != 4) {
    std::fprintf(stderr, "usage: %s PLATFORM.xml N BYTES [--cfg=...]\n", argv[0]);
    return 2;
  }
  e.load_platform(argv[1]);
  nranks = std::atoi(argv[2]);
  nbytes = std::atof(argv[3]);
  auto t0 = std::chrono::steady_clock::now();
  std::clock_t c0 = std::clock();
  for (int r = 0; r < nranks; r++)
    sg4::Actor::create("rank" + std::to_string(r), sg4::Host::by_name("r" + std::to_string(r)), rank_main, r);
  e.run();
  std::chrono::duration<double> wall = std::chrono::steady_clock::now() - t0;
  double cpu = double(std::clock() - c0) / CLOCKS_PER_SEC;
  std::printf("%.17g %.9f %.9f\n", e.get_clock(), wall.count(), cpu);
  return 0;
}
