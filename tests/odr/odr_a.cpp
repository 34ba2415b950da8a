// ODR check, part 1: <epgraph/epgraph.hpp> is included into two translation units of one
// program.  A non-inline function or variable defined in a header breaks the link.
#include <epgraph/epgraph.hpp>

int epgraph_odr_b();

namespace {

int epgraph_odr_a() {
  epgraph::Graph g;
  static_cast<void>(g);
  return 0;
}

}  // namespace

int main() { return epgraph_odr_a() + epgraph_odr_b(); }
