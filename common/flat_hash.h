// An open-addressing hash map from 64-bit keys to 32-bit values, for the engine's O(transfers)
// passes over million-record schedules, where std::unordered_map's node allocations dominate.
#pragma once
#include <cstdint>
#include <vector>

namespace ccsim {

class FlatKeyMap {
 public:
  explicit FlatKeyMap(std::size_t expected) {
    std::size_t cap = 16;
    while (cap < expected * 2) cap <<= 1;
    mask_ = cap - 1;
    keys_.assign(cap, kEmpty);
    values_.resize(cap);
  }
  // Returns false (and leaves the map unchanged) if the key is already present. The table doubles
  // when it is half full, so `expected` is a sizing hint, not a limit.
  bool insert(std::uint64_t key, std::uint32_t value) {
    if ((size_ + 1) * 2 > keys_.size()) grow();
    for (std::size_t i = slot(key);; i = (i + 1) & mask_) {
      if (keys_[i] == kEmpty) {
        keys_[i] = key;
        values_[i] = value;
        ++size_;
        return true;
      }
      if (keys_[i] == key) return false;
    }
  }
  bool find(std::uint64_t key, std::uint32_t* value) const {
    for (std::size_t i = slot(key);; i = (i + 1) & mask_) {
      if (keys_[i] == kEmpty) return false;
      if (keys_[i] == key) {
        *value = values_[i];
        return true;
      }
    }
  }

 private:
  static constexpr std::uint64_t kEmpty = ~0ull;
  void grow() {
    std::vector<std::uint64_t> old_keys(keys_.size() * 2, kEmpty);
    std::vector<std::uint32_t> old_values(values_.size() * 2);
    old_keys.swap(keys_);
    old_values.swap(values_);
    mask_ = keys_.size() - 1;
    for (std::size_t i = 0; i < old_keys.size(); ++i) {
      if (old_keys[i] == kEmpty) continue;
      for (std::size_t j = slot(old_keys[i]);; j = (j + 1) & mask_)
        if (keys_[j] == kEmpty) {
          keys_[j] = old_keys[i];
          values_[j] = old_values[i];
          break;
        }
    }
  }
  std::size_t slot(std::uint64_t key) const { return static_cast<std::size_t>((key * 0x9E3779B97F4A7C15ull) >> 17) & mask_; }
  std::size_t mask_ = 0;
  std::size_t size_ = 0;
  std::vector<std::uint64_t> keys_;
  std::vector<std::uint32_t> values_;
};

}  // namespace ccsim
