// epgraph: read, edit, validate and write torch.export exported programs from C++.
// SPDX-License-Identifier: BSD-3-Clause
//
// pt2_edit: show, validate and edit torch.export programs from the command line.
//
//   pt2_edit show FILE
//   pt2_edit validate FILE
//   pt2_edit add-buffer FILE --name b_kv_cache --dtype float32 --shape 1,8,128,64 [--fill 0] -o OUT
//   pt2_edit copy FILE -o OUT
//
// `copy` loads FILE and saves it unchanged to OUT (the interop tests check that PyTorch reads
// the result back as the same program).
//
// FILE is an exported-program JSON record (`*.json`) or a PT2 / legacy `.pt2`/`.ep` archive (a
// zip file). A JSON record carries no weights, and a legacy archive (torch <= 2.7) keeps them in
// pickles epgraph does not read, so `validate` skips the state checks for both.
// Exit status: 0 on success, 1 when validation finds violations, 2 on bad usage or input.

#include <cstdint>
#include <cstdlib>
#include <epgraph/archive/archive.hpp>
#include <epgraph/edit.hpp>
#include <epgraph/epgraph.hpp>
#include <epgraph/json/json.hpp>
#include <epgraph/verify.hpp>
#include <exception>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

namespace {

int usage() {
  std::cerr << "usage:\n"
               "  pt2_edit show FILE\n"
               "  pt2_edit validate FILE\n"
               "  pt2_edit add-buffer FILE --name NAME --dtype DTYPE --shape D0,D1,... [--fill V] "
               "-o OUT\n"
               "  pt2_edit copy FILE -o OUT\n";
  return 2;
}

// A zip archive starts with "PK\3\4"; anything else is read as JSON.
bool is_archive(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  char magic[4] = {};
  in.read(magic, 4);
  return in.gcount() == 4 && magic[0] == 'P' && magic[1] == 'K' && magic[2] == 3 && magic[3] == 4;
}

epgraph::ExportedProgram<epgraph::HostTensor> load(const std::string& path) {
  if (is_archive(path)) return epgraph::archive::load_archive<epgraph::HostTensor>(path);
  return epgraph::json::load_exported_program<epgraph::HostTensor>(path);
}

// Whether `ep` was loaded from a legacy (torch <= 2.7) archive.
bool is_legacy(const epgraph::ExportedProgram<epgraph::HostTensor>& ep) {
  return ep.metadata().archive && ep.metadata().archive->layout == "legacy";
}

// Saves as an archive when OUT ends in .pt2 or .ep (returns true), else as a JSON record.
bool save(const epgraph::ExportedProgram<epgraph::HostTensor>& ep, const std::string& out) {
  const bool archive_out = (out.size() > 4 && out.compare(out.size() - 4, 4, ".pt2") == 0) ||
                           (out.size() > 3 && out.compare(out.size() - 3, 3, ".ep") == 0);
  if (archive_out) {
    epgraph::archive::save_archive(ep, out);
  } else {
    epgraph::json::save_exported_program(ep, out);
  }
  return archive_out;
}

std::vector<std::int64_t> parse_shape(const std::string& text) {
  std::vector<std::int64_t> out;
  std::size_t pos = 0;
  while (pos <= text.size()) {
    const std::size_t comma = text.find(',', pos);
    const std::string item =
        text.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    std::size_t used = 0;
    const long long v = std::stoll(item, &used);
    if (used != item.size()) throw epgraph::value_error("Bad shape '" + text + "'");
    out.push_back(v);
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  return out;
}

int show(const std::string& file) {
  const auto ep = load(file);
  std::cout << epgraph::to_string(ep.graph()) << "\n" << epgraph::to_string(ep.graph_signature());
  return 0;
}

int validate(const std::string& file) {
  const auto ep = load(file);
  epgraph::VerifyOptions options;
  if (!is_archive(file)) {
    options.check_state = false;
    std::cout << "note: " << file
              << " is a JSON record, which holds no weights: state_dict/constants checks skipped\n";
  } else if (is_legacy(ep)) {
    options.check_state = false;
    std::cout << "note: " << file
              << " is a legacy archive, whose weights are pickles epgraph does not read: "
                 "state_dict/constants checks skipped\n";
  }
  try {
    epgraph::verify(ep, options);
  } catch (const epgraph::verification_error& e) {
    std::cout << e.what() << "\n";
    return 1;
  }
  std::cout << "OK: " << file << " passes every check of verify\n";
  return 0;
}

int add_buffer(int argc, char** argv) {
  const std::string file = argv[2];
  std::string name, dtype_name = "float32", shape, out;
  double fill = 0.0;
  for (int i = 3; i < argc; ++i) {
    const std::string a = argv[i];
    if (i + 1 >= argc) return usage();
    if (a == "--name")
      name = argv[++i];
    else if (a == "--dtype")
      dtype_name = argv[++i];
    else if (a == "--shape")
      shape = argv[++i];
    else if (a == "--fill")
      fill = std::stod(argv[++i]);
    else if (a == "-o")
      out = argv[++i];
    else
      return usage();
  }
  if (name.empty() || shape.empty() || out.empty()) return usage();
  auto ep = load(file);
  const epgraph::dtype type = epgraph::parse_dtype(dtype_name);
  epgraph::Node* node = epgraph::create_mutable_buffer(
      ep, name, epgraph::HostTensor::full(type, parse_shape(shape), fill));
  if (!save(ep, out)) {
    std::cout << "note: " << out << " is a JSON record: the new buffer's data is not in it\n";
  } else if (is_legacy(ep)) {
    std::cout << "note: " << out
              << " is a legacy archive: the new buffer's data is written next to its pickled "
                 "state dict, where torch.export.load does not look\n";
  }
  std::cout << "added buffer placeholder '" << node->name() << "' -> " << out << "\n";
  return 0;
}

int copy(int argc, char** argv) {
  if (argc != 5 || std::string(argv[3]) != "-o") return usage();
  const std::string out = argv[4];
  const auto ep = load(argv[2]);
  save(ep, out);
  std::cout << "copied " << argv[2] << " -> " << out << "\n";
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) return usage();
  const std::string cmd = argv[1];
  try {
    if (cmd == "show" && argc == 3) return show(argv[2]);
    if (cmd == "validate" && argc == 3) return validate(argv[2]);
    if (cmd == "add-buffer") return add_buffer(argc, argv);
    if (cmd == "copy") return copy(argc, argv);
  } catch (const std::exception& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 2;
  }
  return usage();
}
