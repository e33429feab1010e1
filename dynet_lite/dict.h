#pragma once
/// \file dict.h
/// Dict: a two-way map between strings (words, tags, characters) and dense
/// integer ids 0..size()-1, as in DyNet.
#include <string>
#include <unordered_map>
#include <vector>

namespace dynet_lite {

class Dict {
 public:
  Dict() = default;

  /// Number of distinct entries.
  unsigned size() const { return static_cast<unsigned>(words_.size()); }
  bool contains(const std::string& word) const { return ids_.find(word) != ids_.end(); }
  /// After freeze(), convert(word) no longer adds entries.
  void freeze() { frozen_ = true; }
  bool is_frozen() const { return frozen_; }

  /// The id of `word`, adding it when the dictionary is not frozen.  In a frozen
  /// dictionary an unknown word maps to the unk id (see set_unk) or, without one,
  /// throws std::runtime_error naming the word.
  int convert(const std::string& word);
  /// The word of an id; throws index_error for an id out of range.
  const std::string& convert(const int& id) const;

  /// Makes `word` the id returned for unknown words of the frozen dictionary
  /// (adding it when absent).  Only on a frozen dictionary, and only once.
  void set_unk(const std::string& word);
  /// The unk id, or -1 when none was set.
  int get_unk_id() const { return unk_id_; }

  const std::vector<std::string>& get_words() const { return words_; }
  /// Removes every entry and the unk setting; the frozen flag stays as it is.
  void clear();

 private:
  bool frozen_ = false;
  bool map_unk_ = false;
  int unk_id_ = -1;
  std::vector<std::string> words_;
  std::unordered_map<std::string, int> ids_;
};

}  // namespace dynet_lite
