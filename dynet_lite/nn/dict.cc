// String <-> id dictionary.
#include "dynet_lite/dict.h"

#include "dynet_lite/except.h"

namespace dynet_lite {

int Dict::convert(const std::string& word) {
  auto it = ids_.find(word);
  if (it != ids_.end()) return it->second;
  if (frozen_) {
    DYNET_LITE_CHECK(map_unk_, std::runtime_error,
                     "Dict::convert: unknown word '" << word << "' in a frozen dictionary without an unk entry "
                                                     << "(call set_unk() after freeze())");
    return unk_id_;
  }
  const int id = static_cast<int>(words_.size());
  words_.push_back(word);
  ids_.emplace(word, id);
  return id;
}

const std::string& Dict::convert(const int& id) const {
  DYNET_LITE_INDEX_CHECK(id >= 0 && static_cast<size_t>(id) < words_.size(),
                         "Dict::convert: id " << id << " is out of range (size " << words_.size() << ")");
  return words_[static_cast<size_t>(id)];
}

void Dict::set_unk(const std::string& word) {
  DYNET_LITE_CHECK(frozen_, std::runtime_error, "Dict::set_unk('" << word << "'): call freeze() first");
  DYNET_LITE_CHECK(!map_unk_, std::runtime_error,
                   "Dict::set_unk('" << word << "'): the unk entry is already '" << words_[unk_id_] << "'");
  frozen_ = false;
  unk_id_ = convert(word);
  frozen_ = true;
  map_unk_ = true;
}

void Dict::clear() {
  words_.clear();
  ids_.clear();
  map_unk_ = false;
  unk_id_ = -1;
}

}  // namespace dynet_lite
