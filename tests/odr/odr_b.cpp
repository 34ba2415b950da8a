// ODR check, part 2: see odr_a.cpp.
#include <epgraph/epgraph.hpp>

int epgraph_odr_b();

int epgraph_odr_b() {
  epgraph::Graph g;
  static_cast<void>(g);
  return 0;
}
