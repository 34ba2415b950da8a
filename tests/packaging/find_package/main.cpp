// A minimal epgraph consumer: includes the umbrella header and builds an empty graph.
#include <cstdio>
#include <epgraph/epgraph.hpp>
#include <epgraph/version.hpp>

int main() {
  epgraph::Graph g;
  static_cast<void>(g);
  std::printf("epgraph %d.%d.%d (major %d)\n", EPGRAPH_VERSION_MAJOR, EPGRAPH_VERSION_MINOR,
              EPGRAPH_VERSION_PATCH, EPGRAPH_VERSION_MAJOR);
  return 0;
}
