// edit_grid: the test tool the ExecuTorch oracle grid drives (tests/interop).
// SPDX-License-Identifier: BSD-3-Clause
//
// edit_grid: applies epgraph's ExecuTorch-style edits (edit.hpp, lookup.hpp) to a .pt2 file, one
// call or a chain of calls, for tests/interop/test_oracle_grid.py, which runs ExecuTorch 1.5.1's
// backends/transforms/utils.py helpers on the same program and compares.
//
//   edit_grid IN.pt2 [-o OUT.pt2] CALL [then CALL]...
//   edit_grid --batch IN.pt2 CASES.txt   (one `[-o OUT] CALL [then CALL]...` a line, each on a
//                                         fresh copy of IN; output `case N`, lines, `exit S`)
//   CALL:
//     create_mutable_buffer --name N --shape D0,D1 [--fill V]
//     create_constant_placeholder --kind KIND --name N [--persistent true|false]
//                                 [--before NODE] --shape D0,D1 [--fill V]
//     delete_constant_placeholder --node NODE
//     get_param_tensor --node NODE
//     set_param_tensor --node NODE --shape D0,D1 [--fill V]
//     rename_state --from TARGET --to TARGET   (not an ExecuTorch helper: renames a state_dict
//                                               entry and the input specs reading it)
//
// Tensors are float32, filled with V (default 0). `--before NODE` puts the graph's insertion
// point before NODE (ExecuTorch's `with graph.inserting_before(node)`); without it the default
// point is used. KIND is an InputKind name (PARAMETER, BUFFER, CONSTANT_TENSOR, USER_INPUT, ...).
//
// Prints one line per call: `node NAME target TARGET` (create_*), `deleted NAME`, `set NAME`,
// `renamed FROM -> TO`, and
// for get_param_tensor `tensor dtype=D sizes=[..] bytes=HEX` (the row-major bytes) or `none`.
// When every call succeeded and -o is given the program is saved to OUT. Exit status: 0 on
// success; 3 when a call refused, after printing `refused value_error|runtime_error|other:
// MESSAGE` (the program is not saved); 2 on bad usage or a file that cannot be read or written.

#include <cstdint>
#include <cstdio>
#include <epgraph/archive/archive.hpp>
#include <epgraph/epgraph.hpp>
#include <epgraph/program/edit.hpp>
#include <epgraph/program/lookup.hpp>
#include <exception>
#include <fstream>
#include <iostream>
#include <iterator>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

namespace {

using Program = epgraph::ExportedProgram<epgraph::HostTensor>;

struct usage_error : std::exception {};

struct Call {
  std::string name;
  std::map<std::string, std::string> options;

  const std::string& need(const std::string& key) const {
    auto it = options.find(key);
    if (it == options.end()) throw usage_error();
    return it->second;
  }
  std::optional<std::string> get(const std::string& key) const {
    auto it = options.find(key);
    if (it == options.end()) return std::nullopt;
    return it->second;
  }
};

std::vector<std::int64_t> parse_shape(const std::string& text) {
  std::vector<std::int64_t> out;
  if (text.empty()) return out;  // a 0-dim tensor
  std::size_t pos = 0;
  while (true) {
    const std::size_t comma = text.find(',', pos);
    out.push_back(std::stoll(text.substr(pos, comma - pos)));
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  return out;
}

epgraph::HostTensor make_tensor(const Call& call) {
  const double fill = std::stod(call.get("--fill").value_or("0"));
  return epgraph::HostTensor::full(epgraph::dtype::float32, parse_shape(call.need("--shape")),
                                   fill);
}

epgraph::InputKind parse_kind(const std::string& text) {
  using epgraph::InputKind;
  for (InputKind k : {InputKind::USER_INPUT, InputKind::PARAMETER, InputKind::BUFFER,
                      InputKind::CONSTANT_TENSOR, InputKind::CUSTOM_OBJ, InputKind::TOKEN}) {
    if (text == epgraph::kind_name(k)) return k;
  }
  throw usage_error();
}

epgraph::Node* node_named(Program& ep, const std::string& name) {
  epgraph::Node* n = ep.graph().find_node(name);
  if (n == nullptr) throw usage_error();  // the grid only names nodes that exist
  return n;
}

void describe(const epgraph::HostTensor* t) {
  if (t == nullptr) {
    std::cout << "none\n";
    return;
  }
  std::cout << "tensor dtype=" << epgraph::dtype_name(t->scalar_type()) << " sizes=[";
  for (std::size_t i = 0; i < t->sizes().size(); ++i) {
    std::cout << (i == 0 ? "" : ", ") << t->sizes()[i];
  }
  std::cout << "] bytes=";
  char hex[3];
  for (std::byte b : t->bytes()) {
    std::snprintf(hex, sizeof hex, "%02x", static_cast<unsigned>(b));
    std::cout << hex;
  }
  std::cout << "\n";
}

// Applies one call; returns true when it changed the program.
bool apply(Program& ep, const Call& call) {
  if (call.name == "create_mutable_buffer") {
    epgraph::Node* n = epgraph::create_mutable_buffer(ep, call.need("--name"), make_tensor(call));
    std::cout << "node " << n->name() << " target " << n->target() << "\n";
    return true;
  }
  if (call.name == "create_constant_placeholder") {
    std::optional<bool> persistent;
    if (auto p = call.get("--persistent")) {
      if (*p != "true" && *p != "false") throw usage_error();
      persistent = *p == "true";
    }
    const epgraph::InputKind kind = parse_kind(call.need("--kind"));
    epgraph::HostTensor data = make_tensor(call);
    epgraph::Node* n = nullptr;
    if (auto before = call.get("--before")) {
      auto at = ep.graph().inserting_before(node_named(ep, *before));
      n = epgraph::create_constant_placeholder(ep, call.need("--name"), kind, std::move(data),
                                               persistent);
    } else {
      n = epgraph::create_constant_placeholder(ep, call.need("--name"), kind, std::move(data),
                                               persistent);
    }
    std::cout << "node " << n->name() << " target " << n->target() << "\n";
    return true;
  }
  if (call.name == "delete_constant_placeholder") {
    const std::string name = call.need("--node");
    epgraph::delete_constant_placeholder(ep, node_named(ep, name));
    std::cout << "deleted " << name << "\n";
    return true;
  }
  if (call.name == "get_param_tensor") {
    describe(epgraph::get_param_tensor(std::as_const(ep), node_named(ep, call.need("--node"))));
    return false;
  }
  if (call.name == "set_param_tensor") {
    epgraph::Node* n = node_named(ep, call.need("--node"));
    epgraph::set_param_tensor(ep, n, make_tensor(call));
    std::cout << "set " << n->name() << "\n";
    return true;
  }
  if (call.name == "rename_state") {
    // Not an ExecuTorch helper: moves state_dict entry FROM to TO (the tensor itself untouched,
    // its bytes not read) and points the input specs that read FROM at TO, so that the tests can
    // see an unchanged tensor saved under a new name (copied raw by save_archive).
    const std::string& from = call.need("--from");
    const std::string& to = call.need("--to");
    const epgraph::HostTensor* t = ep.state_dict().find(from);
    if (t == nullptr || ep.state_dict().contains(to)) throw usage_error();
    epgraph::HostTensor moved = *t;
    (void)ep.state_dict().erase(from);
    ep.state_dict().insert(to, std::move(moved));
    for (auto& spec : ep.graph_signature().input_specs) {
      if (spec.target() == from)
        spec = epgraph::InputSpec(spec.kind(), spec.arg(), to, spec.persistent());
    }
    std::cout << "renamed " << from << " -> " << to << "\n";
    return true;
  }
  throw usage_error();
}

int usage() {
  std::cerr
      << "usage: edit_grid IN.pt2 [-o OUT.pt2] CALL [--opt V]... [then CALL [--opt V]...]...\n"
         "       edit_grid --batch IN.pt2 CASES.txt\n"
         "  CALL: create_mutable_buffer | create_constant_placeholder | "
         "delete_constant_placeholder | get_param_tensor | set_param_tensor | rename_state\n";
  return 2;
}

// Reads `[-o OUT] CALL [--opt V]... [then CALL ...]...` from words[first..]; false on bad usage.
bool parse_case(const std::vector<std::string>& words, std::size_t i, std::string& out,
                std::vector<Call>& calls) {
  if (i < words.size() && words[i] == "-o") {
    if (i + 1 >= words.size()) return false;
    out = words[i + 1];
    i += 2;
  }
  while (i < words.size()) {
    Call call;
    call.name = words[i++];
    while (i < words.size() && words[i] != "then") {
      const std::string& key = words[i];
      if (key.rfind("--", 0) != 0 || i + 1 >= words.size()) return false;
      call.options[key] = words[i + 1];
      i += 2;
    }
    if (i < words.size()) ++i;  // "then"
    calls.push_back(std::move(call));
  }
  return !calls.empty();
}

// Runs the calls on `ep`; prints their lines; saves to `out` when every call succeeded and one
// changed the program. Returns the exit status (0, 2 or 3; see the top of the file).
int run_case(Program& ep, const std::vector<Call>& calls, const std::string& out) {
  bool changed = false;
  for (const Call& call : calls) {
    try {
      changed = apply(ep, call) || changed;
    } catch (const usage_error&) {
      return usage();
    } catch (const epgraph::value_error& e) {
      std::cout << "refused value_error: " << e.what() << "\n";
      return 3;
    } catch (const epgraph::runtime_error& e) {
      std::cout << "refused runtime_error: " << e.what() << "\n";
      return 3;
    } catch (const std::exception& e) {
      std::cout << "refused other: " << e.what() << "\n";
      return 3;
    }
  }
  if (!out.empty() && changed) {
    try {
      epgraph::archive::save_archive(ep, out);
    } catch (const std::exception& e) {
      std::cerr << "error: " << out << ": " << e.what() << "\n";
      return 2;
    }
  }
  return 0;
}

std::optional<Program> load(const std::string& in) {
  try {
    return epgraph::archive::load_archive<epgraph::HostTensor>(in);
  } catch (const std::exception& e) {
    std::cerr << "error: " << e.what() << "\n";
    return std::nullopt;
  }
}

// --batch IN CASES: one case a line (the arguments after IN, separated by blanks), each on a
// fresh copy of IN; prints `case N`, the case's lines, then `exit S` (S as the exit status of a
// single run).
int batch(const std::string& in, const std::string& cases_file) {
  std::optional<Program> base = load(in);
  if (!base) return 2;
  std::ifstream cases(cases_file);
  if (!cases) {
    std::cerr << "error: cannot read " << cases_file << "\n";
    return 2;
  }
  std::string line;
  for (int n = 0; std::getline(cases, line); ++n) {
    std::istringstream words_in(line);
    std::vector<std::string> words{std::istream_iterator<std::string>(words_in), {}};
    std::string out;
    std::vector<Call> calls;
    std::cout << "case " << n << "\n";
    if (!parse_case(words, 0, out, calls)) return usage();
    Program ep = base->clone();
    const int status = run_case(ep, calls, out);
    std::cout << "exit " << status << "\n";
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 4 && std::string(argv[1]) == "--batch") return batch(argv[2], argv[3]);
  if (argc < 3) return usage();
  const std::vector<std::string> words(argv + 1, argv + argc);
  std::string out;
  std::vector<Call> calls;
  if (!parse_case(words, 1, out, calls)) return usage();
  std::optional<Program> ep = load(words[0]);
  if (!ep) return 2;
  return run_case(*ep, calls, out);
}
