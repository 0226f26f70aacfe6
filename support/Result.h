// Errors as values, for every room: a Result<T> holds a T or an Error whose message is complete
// (e.g. "softmax.pto:31:9: runtime error: TLOAD reads past the end of argument %arg0"). The one
// result type of the encoder, the runtime and the reference interpreter. Header-only, below isa/
// in the room graph (docs/development.md).
#pragma once

#include <string>
#include <utility>
#include <variant>

namespace pto {

struct Error {
  std::string message;
};

template <typename T> class Result {
public:
  Result(T value) : v_(std::move(value)) {}
  Result(Error e) : v_(std::move(e)) {}
  static Result failure(std::string message) { return Result(Error{std::move(message)}); }

  bool ok() const { return v_.index() == 0; }
  explicit operator bool() const { return ok(); }
  T& value() { return std::get<0>(v_); }
  const T& value() const { return std::get<0>(v_); }
  T& operator*() { return value(); }
  const T& operator*() const { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  const Error& error() const { return std::get<1>(v_); }

private:
  std::variant<T, Error> v_;
};

} // namespace pto
