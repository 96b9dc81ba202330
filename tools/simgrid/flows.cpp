// flows: run a pattern of point-to-point flows on a SimGrid platform and
// print each flow's completion time. Used by netaware's simulator validation
// (see docs/validation.md); netaware's CI does not build it.
//
// Usage: flows PLATFORM.xml PATTERN.txt [--cfg=...]
// PATTERN lines: "<id> <src host> <dst host> <bytes> <start seconds>".
// Output lines:  "<id> <completion seconds>" (%.17g).
#include <simgrid/s4u.hpp>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace sg4 = simgrid::s4u;

struct Flow {
  long id;
  std::string src, dst;
  double bytes;
  double start;
};

static void run_flow(Flow f)
{
  sg4::Host* src = sg4::Host::by_name(f.src);
  sg4::Host* dst = sg4::Host::by_name(f.dst);
  if (f.start > 0)
    sg4::this_actor::sleep_until(f.start);
  sg4::Comm::sendto(src, dst, static_cast<uint64_t>(f.bytes));
  std::printf("%ld %.17g\n", f.id, sg4::Engine::get_clock());
}

int main(int argc, char** argv)
{
  sg4::Engine e(&argc, argv);
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s PLATFORM.xml PATTERN.txt [--cfg=...]\n", argv[0]);
    return 2;
  }
  e.load_platform(argv[1]);
  std::ifstream in(argv[2]);
  if (!in) {
    std::fprintf(stderr, "cannot read %s\n", argv[2]);
    return 1;
  }
  std::vector<Flow> flows;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#')
      continue;
    std::istringstream ss(line);
    Flow f;
    if (!(ss >> f.id >> f.src >> f.dst >> f.bytes >> f.start)) {
      std::fprintf(stderr, "bad pattern line: %s\n", line.c_str());
      return 1;
    }
    flows.push_back(f);
  }
  for (auto const& f : flows)
    sg4::Actor::create("flow" + std::to_string(f.id), sg4::Host::by_name(f.src), run_flow, f);
  e.run();
  return 0;
}
