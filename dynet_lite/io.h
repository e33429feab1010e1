#pragma once
/// \file io.h
/// Saving and loading parameters in DyNet's text format.
///
/// A file is a sequence of entries, each a header line and one or two data lines:
/// \code
///   #Parameter# /enc/W {10,5} 4501 ZERO_GRAD
///   +1.23456791e-01 -2.00000000e+00 ...            (the 50 values, column-major)
///   #LookupParameter# /E {8,1000} 72001 FULL_GRAD
///   ...values of the whole table (rows one after the other)...
///   ...the gradient, present because of FULL_GRAD...
/// \endcode
/// The dimension of a lookup table is the row shape with the number of rows
/// appended.  The byte count is the size of the data lines, newlines included.
/// Values are written with 9 significant digits, so float32 values load back
/// bit for bit.  A FULL_GRAD entry also carries the pending gradient (written
/// when the parameter has received gradient since the last update).
///
/// Keys (DyNet semantics): save(collection) writes each parameter under its full
/// name ("/enc/W").  With a key, the collection's own prefix is replaced by the
/// key: saving the collection "/enc/" with key "k" writes "/enc/W" as "k/W".
/// populate(collection, key) reads the entries whose name starts with key + "/"
/// (all entries when the key is empty) and assigns them, in file order, to the
/// collection's parameters and lookup tables, in creation order; the counts and
/// every dimension must match.
///
/// Saving is atomic: the file is written to "<filename>.tmp.<pid>", flushed to
/// disk, then renamed over the target, so a failed or interrupted save leaves
/// the previous file as it was; the next save to that file removes the
/// temporaries such interrupted saves left (those whose process is gone).
/// Loading either fills every target or, on any error, changes nothing.  Errors
/// throw io_error naming the file and, for a malformed file, the line.
#include <string>
#include <vector>

#include "dynet_lite/model.h"

namespace dynet_lite {

/// Writes parameters to a text file (DyNet's TextFileSaver).
class TextFileSaver {
 public:
  /// With append == false the file is replaced by the first save(); with append
  /// == true the saves are added after its existing content.  Nothing is written
  /// until save() is called.  Throws io_error when the file's directory does not
  /// exist.
  explicit TextFileSaver(const std::string& filename, bool append = false);
  ~TextFileSaver();
  TextFileSaver(const TextFileSaver&) = delete;
  TextFileSaver& operator=(const TextFileSaver&) = delete;

  /// Every parameter and lookup table of the collection and its subcollections.
  void save(const ParameterCollection& model, const std::string& key = "");
  /// One parameter, under `key` (its full name when the key is empty).
  void save(const Parameter& param, const std::string& key = "");
  void save(const LookupParameter& param, const std::string& key = "");

 private:
  struct Entry;
  void write_entries(const std::vector<Entry>& entries);
  std::string filename_;
  bool keep_existing_;  ///< append mode, or a later save() of this saver
};

/// Reads parameters from a text file (DyNet's TextFileLoader).
class TextFileLoader {
 public:
  /// Throws io_error when the file cannot be opened.
  explicit TextFileLoader(const std::string& filename);
  ~TextFileLoader();

  /// Fills the collection's parameters and lookup tables in order; see the file comment.
  void populate(ParameterCollection& model, const std::string& key = "");
  /// Fills one parameter from the entry named `key` (the parameter's own full
  /// name when the key is empty).  The dimensions must match.
  void populate(Parameter& param, const std::string& key = "");
  void populate(LookupParameter& param, const std::string& key = "");

  /// Creates a parameter in the collection from the entry named `key`, with
  /// that entry's shape and values; it is named after the key's last component.
  Parameter load_param(ParameterCollection& model, const std::string& key);
  LookupParameter load_lookup_param(ParameterCollection& model, const std::string& key);

  /// The names of all entries, in file order.
  std::vector<std::string> keys() const;

 private:
  std::string filename_;
};

}  // namespace dynet_lite
