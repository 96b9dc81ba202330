// routes.cpp loads a SimGrid platform file and, for each "src dst" pair read
// from standard input, prints "src dst latency link@bandwidth..." as SimGrid
// routes it. TestSimGridExportRoutes compiles it when SimGrid is installed
// and compares the answers with platform.Route.
#include <simgrid/s4u.hpp>
#include <iomanip>
#include <iostream>
#include <string>
#include <vector>

int main(int argc, char** argv)
{
  simgrid::s4u::Engine e(&argc, argv);
  if (argc < 2) {
    std::cerr << "usage: routes PLATFORM.xml < pairs\n";
    return 2;
  }
  e.load_platform(argv[1]);
  // Dijkstra and Floyd zones build their graphs when the platform is
  // sealed, which run() would do.
  e.seal_platform();
  std::string a;
  std::string b;
  std::cout << std::setprecision(17);
  while (std::cin >> a >> b) {
    const auto* ha = simgrid::s4u::Host::by_name(a);
    const auto* hb = simgrid::s4u::Host::by_name(b);
    std::vector<simgrid::s4u::Link*> links;
    double latency = 0;
    ha->route_to(hb, links, &latency);
    std::cout << a << " " << b << " " << latency;
    for (const auto* l : links)
      std::cout << " " << l->get_name() << "@" << l->get_bandwidth();
    std::cout << "\n";
  }
  return 0;
}
