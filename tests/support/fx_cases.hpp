// The expected results of torch.fx's toolkit, written by tools/gen_fx_toolkit_cases.py with
// torch 2.13 to tests/data/fx_toolkit_cases.txt: sections "### <name>" followed by their text.
// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <cstdint>
#include <epgraph/ir/argument.hpp>
#include <epgraph/ir/graph.hpp>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace epgraph_test {

// Every section of tests/data/fx_toolkit_cases.txt by name (read once).
inline const std::map<std::string, std::string>& fx_cases() {
  static const std::map<std::string, std::string> all = [] {
    std::ifstream in(std::string(EPGRAPH_SOURCE_DIR) + "/tests/data/fx_toolkit_cases.txt");
    if (!in) throw std::runtime_error("cannot read tests/data/fx_toolkit_cases.txt");
    std::map<std::string, std::string> out;
    std::string line;
    std::string* current = nullptr;
    while (std::getline(in, line)) {
      if (line.rfind("### ", 0) == 0) {
        current = &out[line.substr(4)];
      } else if (current != nullptr) {
        if (!current->empty()) *current += "\n";
        *current += line;
      }
    }
    return out;
  }();
  return all;
}

// The text of section `name`; throws when there is none.
inline const std::string& fx_case(const std::string& name) {
  auto it = fx_cases().find(name);
  if (it == fx_cases().end()) throw std::runtime_error("no case " + name);
  return it->second;
}

inline std::vector<std::string> split_fields(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::string item;
  std::istringstream in(s);
  while (std::getline(in, item, sep)) out.push_back(item);
  if (!s.empty() && s.back() == sep) out.emplace_back();
  return out;
}

// One argument of a graph spec: %node, an int, a float (with a dot), [a b c].
inline epgraph::Argument parse_spec_arg(epgraph::Graph& g, const std::string& t) {
  if (t.front() == '%') {
    epgraph::Node* n = g.find_node(t.substr(1));
    if (n == nullptr) throw std::runtime_error("graph spec: no node " + t);
    return epgraph::Argument(n);
  }
  if (t.front() == '[') {
    epgraph::ArgumentList items;
    for (const std::string& item : split_fields(t.substr(1, t.size() - 2), ' ')) {
      items.push_back(parse_spec_arg(g, item));
    }
    return epgraph::Argument(std::move(items));
  }
  if (t.find('.') != std::string::npos) return epgraph::Argument(std::stod(t));
  return epgraph::Argument(static_cast<std::int64_t>(std::stoll(t)));
}

// Rebuilds a graph from the generator's spec lines "name|target|args|kwargs" (last:
// "output|tuple-or-single|results|"), with schema checks as given.
inline std::unique_ptr<epgraph::Graph> build_spec_graph(const std::string& spec,
                                                        bool schema_checks = true) {
  auto g = std::make_unique<epgraph::Graph>();
  g->set_schema_checks(schema_checks);
  for (const std::string& line : split_fields(spec, '\n')) {
    const std::vector<std::string> f = split_fields(line, '|');
    if (f.size() != 4) throw std::runtime_error("graph spec: bad line " + line);
    epgraph::ArgumentList args;
    if (!f[2].empty()) {
      for (const std::string& a : split_fields(f[2], ',')) args.push_back(parse_spec_arg(*g, a));
    }
    if (f[0] == "output") {
      g->output(std::move(args));  // one value or several: both a tuple in epgraph
      continue;
    }
    if (f[1] == "placeholder") {
      g->placeholder(f[0]);
      continue;
    }
    epgraph::Kwargs kwargs;
    if (!f[3].empty()) {
      for (const std::string& kv : split_fields(f[3], ',')) {
        const auto eq = kv.find('=');
        kwargs.emplace_back(kv.substr(0, eq), parse_spec_arg(*g, kv.substr(eq + 1)));
      }
    }
    g->call_function(f[1], std::move(args), std::move(kwargs), f[0]);
  }
  return g;
}

}  // namespace epgraph_test
