// lanes: run lanes of back-to-back point-to-point flows on a SimGrid
// platform and print each flow's completion time. A lane is one actor that
// sends its flows one after the other, each starting when the previous one
// completed, so that the number of flows in flight stays the number of
// lanes (the dense pattern of docs/validation.md). netaware's CI does not
// build it.
//
// Usage: lanes PLATFORM.xml PATTERN.txt [--cfg=...]
// PATTERN lines: "<flow id> <lane> <src host> <dst host> <bytes>", a lane's
// flows in the order they are sent.
// Output lines:  "<flow id> <completion seconds>" (%.17g).
#include <simgrid/s4u.hpp>

#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace sg4 = simgrid::s4u;

struct Flow {
  long id;
  std::string src, dst;
  double bytes;
};

static void run_lane(std::vector<Flow> lane)
{
  for (auto const& f : lane) {
    sg4::Comm::sendto(sg4::Host::by_name(f.src), sg4::Host::by_name(f.dst), static_cast<uint64_t>(f.bytes));
    std::printf("%ld %.17g\n", f.id, sg4::Engine::get_clock());
  }
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
  std::map<long, std::vector<Flow>> lanes;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#')
      continue;
    std::istringstream ss(line);
    Flow f;
    long lane;
    if (!(ss >> f.id >> lane >> f.src >> f.dst >> f.bytes)) {
      std::fprintf(stderr, "bad pattern line: %s\n", line.c_str());
      return 1;
    }
    lanes[lane].push_back(f);
  }
  for (auto const& [lane, flows] : lanes)
    sg4::Actor::create("lane" + std::to_string(lane), sg4::Host::by_name(flows.front().src), run_lane, flows);
  e.run();
  return 0;
}
