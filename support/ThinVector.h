// A vector that costs one pointer, and no allocation, while it is empty. For the fields of a
// record made a million times that most instances leave empty (an op's regions, its integer
// payload, its attribute list): a std::vector is three pointers in every instance. The elements
// live in a std::vector behind the pointer once there are any, so the interface below is
// std::vector's (the part of it the project uses), with pointers as iterators.
#pragma once

#include <algorithm>
#include <cstddef>
#include <initializer_list>
#include <memory>
#include <vector>

namespace pto::support {

template <typename T> class ThinVector {
public:
  using value_type = T;
  using size_type = size_t;
  using iterator = T*;
  using const_iterator = const T*;
  using reference = T&;
  using const_reference = const T&;

  ThinVector() = default;
  ThinVector(std::initializer_list<T> init) { assign(init.begin(), init.end()); }
  ThinVector(std::vector<T> v) {
    if (!v.empty()) p_ = std::make_unique<std::vector<T>>(std::move(v));
  }
  ThinVector(const ThinVector& o) : p_(o.p_ ? std::make_unique<std::vector<T>>(*o.p_) : nullptr) {}
  ThinVector(ThinVector&&) noexcept = default;
  ThinVector& operator=(const ThinVector& o) {
    if (this != &o) p_ = o.p_ ? std::make_unique<std::vector<T>>(*o.p_) : nullptr;
    return *this;
  }
  ThinVector& operator=(ThinVector&&) noexcept = default;
  ThinVector& operator=(std::vector<T> v) { return *this = ThinVector(std::move(v)); }
  ThinVector& operator=(std::initializer_list<T> init) {
    assign(init.begin(), init.end());
    return *this;
  }

  size_t size() const { return p_ ? p_->size() : 0; }
  bool empty() const { return size() == 0; }
  T* data() { return p_ ? p_->data() : nullptr; }
  const T* data() const { return p_ ? p_->data() : nullptr; }
  T* begin() { return data(); }
  T* end() { return data() + size(); }
  const T* begin() const { return data(); }
  const T* end() const { return data() + size(); }
  T& operator[](size_t i) { return (*p_)[i]; }
  const T& operator[](size_t i) const { return (*p_)[i]; }
  T& at(size_t i) { return vec().at(i); }
  const T& at(size_t i) const { return p_ ? p_->at(i) : std::vector<T>().at(i); }
  T& front() { return p_->front(); }
  const T& front() const { return p_->front(); }
  T& back() { return p_->back(); }
  const T& back() const { return p_->back(); }

  void push_back(const T& v) { vec().push_back(v); }
  void push_back(T&& v) { vec().push_back(std::move(v)); }
  template <typename... A> T& emplace_back(A&&... a) {
    return vec().emplace_back(std::forward<A>(a)...);
  }
  void pop_back() { p_->pop_back(); }
  void clear() { p_.reset(); }
  void reserve(size_t n) {
    if (n) vec().reserve(n);
  }
  void resize(size_t n) {
    if (n || p_) vec().resize(n);
  }
  void resize(size_t n, const T& v) {
    if (n || p_) vec().resize(n, v);
  }
  template <typename It> void assign(It first, It last) {
    p_.reset();
    if (first != last) vec().assign(first, last);
  }
  T* insert(const T* pos, const T& v) {
    const size_t at = pos - data();
    vec().insert(p_->begin() + at, v);
    return data() + at;
  }
  template <typename It> T* insert(const T* pos, It first, It last) {
    const size_t at = pos - data();
    if (first != last) vec().insert(p_->begin() + at, first, last);
    return data() + at;
  }
  T* erase(const T* pos) {
    const size_t at = pos - data();
    p_->erase(p_->begin() + at);
    return data() + at;
  }
  T* erase(const T* first, const T* last) {
    const size_t at = first - data(), n = last - first;
    if (n) p_->erase(p_->begin() + at, p_->begin() + at + n);
    return data() + at;
  }
  /// The elements as a std::vector (a copy).
  std::vector<T> toVector() const { return p_ ? *p_ : std::vector<T>(); }

  bool operator==(const ThinVector& o) const {
    return size() == o.size() && std::equal(begin(), end(), o.begin());
  }

private:
  std::vector<T>& vec() {
    if (!p_) p_ = std::make_unique<std::vector<T>>();
    return *p_;
  }
  std::unique_ptr<std::vector<T>> p_;
};

} // namespace pto::support
