// The error contract: every exception that leaves the library is a neml2::aoti::Exception.
#pragma once

#include <exception>
#include <memory>
#include <new>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include <c10/util/Exception.h>

namespace neml2::aoti
{
/**
 * @brief Base of every error the library throws.
 *
 * A host branches on recoverable(): a recoverable error (a solve that did not
 * converge) may succeed on retry with different input, e.g. a smaller time
 * step; an unrecoverable one would fail identically and must stop the run.
 *
 * @code
 * try { auto out = m.forward(inputs); }
 * catch (const neml2::aoti::Exception & e)
 * {
 *   if (e.recoverable()) { dt *= 0.5; }
 *   else throw;
 * }
 * @endcode
 */
class Exception : public std::runtime_error
{
public:
  /// @brief Construct with the full, human-readable message.
  explicit Exception(const std::string & message) : std::runtime_error(message) {}

  /// @brief Whether a retry with different input may succeed.
  virtual bool recoverable() const noexcept = 0;

  /// @brief A heap copy that keeps the dynamic type (used to carry errors across threads).
  virtual std::shared_ptr<const Exception> clone() const = 0;

  /// @brief Throw a copy of this error with its dynamic type.
  [[noreturn]] virtual void rethrow() const = 0;
};

/**
 * @brief A nonlinear solve diverged or hit its iteration cap (recoverable).
 *
 * Thrown for a chunk in which at least one material point did not converge;
 * the message says how many points failed out of how many and the worst residual.
 */
class ConvergenceError : public Exception
{
public:
  /// @brief Construct with the full message.
  explicit ConvergenceError(const std::string & message) : Exception(message) {}
  /// @copydoc Exception::recoverable
  bool recoverable() const noexcept override { return true; }
  /// @copydoc Exception::clone
  std::shared_ptr<const Exception> clone() const override
  {
    return std::make_shared<ConvergenceError>(*this);
  }
  /// @copydoc Exception::rethrow
  [[noreturn]] void rethrow() const override { throw *this; }
};

/**
 * @brief An error a retry cannot fix (not recoverable).
 *
 * Bad input (missing input, wrong shape, dtype or device), a malformed stub or
 * artifact, an invalid scheduler configuration, and every foreign error
 * (c10::Error, std::bad_alloc, ...) normalized at the library boundary.
 */
class FatalError : public Exception
{
public:
  /// @brief Construct with the full message.
  explicit FatalError(const std::string & message) : Exception(message) {}
  /// @copydoc Exception::recoverable
  bool recoverable() const noexcept override { return false; }
  /// @copydoc Exception::clone
  std::shared_ptr<const Exception> clone() const override
  {
    return std::make_shared<FatalError>(*this);
  }
  /// @copydoc Exception::rethrow
  [[noreturn]] void rethrow() const override { throw *this; }
};

/**
 * @brief Several chunks failed in one asynchronous dispatch.
 *
 * recoverable() holds only if every sub-error is recoverable, so one fatal error
 * among recoverable ones still forces a hard stop.
 */
class AggregateError : public Exception
{
public:
  /// @brief Collect @p errors (at least one); the message lists each of them.
  explicit AggregateError(std::vector<std::shared_ptr<const Exception>> errors)
    : Exception(compose(errors)),
      _errors(std::move(errors))
  {
  }

  /// @copydoc Exception::recoverable
  bool recoverable() const noexcept override
  {
    for (const auto & e : _errors)
      if (!e->recoverable())
        return false;
    return true;
  }

  /// @brief The individual errors, in the order the chunks were dispatched.
  const std::vector<std::shared_ptr<const Exception>> & errors() const noexcept { return _errors; }

  /// @copydoc Exception::clone
  std::shared_ptr<const Exception> clone() const override
  {
    return std::make_shared<AggregateError>(*this);
  }
  /// @copydoc Exception::rethrow
  [[noreturn]] void rethrow() const override { throw *this; }

private:
  static std::string compose(const std::vector<std::shared_ptr<const Exception>> & errors)
  {
    std::string msg = std::to_string(errors.size()) + " errors during dispatch:";
    for (std::size_t i = 0; i < errors.size(); ++i)
      msg += "\n  [" + std::to_string(i) + "] " + errors[i]->what();
    return msg;
  }

  std::vector<std::shared_ptr<const Exception>> _errors;
};

/**
 * @brief Turn any in-flight exception into a library Exception.
 *
 * Library errors are kept with their dynamic type; everything else becomes a
 * FatalError whose message starts with @p context and keeps the original text.
 * Call it only inside a catch block.
 */
inline std::shared_ptr<const Exception>
normalize_current_exception(const std::string & context)
{
  const std::string prefix = context.empty() ? std::string() : context + ": ";
  try
  {
    throw;
  }
  catch (const Exception & e)
  {
    return e.clone();
  }
  catch (const c10::Error & e)
  {
    return std::make_shared<FatalError>(prefix + e.what_without_backtrace());
  }
  catch (const std::bad_alloc &)
  {
    return std::make_shared<FatalError>(prefix + "out of memory (std::bad_alloc)");
  }
  catch (const std::exception & e)
  {
    return std::make_shared<FatalError>(prefix + e.what());
  }
  catch (...)
  {
    return std::make_shared<FatalError>(prefix + "unknown non-standard exception");
  }
}

/**
 * @brief Rethrow the in-flight exception as a library Exception (see normalize_current_exception).
 *
 * Call it only inside a catch block.
 */
[[noreturn]] inline void
rethrow_normalized(const std::string & context)
{
  normalize_current_exception(context)->rethrow();
  std::terminate(); // unreachable: rethrow() always throws
}

/**
 * @brief Run @p f and let only library exceptions escape.
 *
 * The boundary guard of every public entry point: foreign errors are
 * normalized to FatalError with the context prefixed. @p context is a string,
 * or a callable returning one, evaluated only when an error is normalized, so
 * the successful path builds no message.
 */
template <class C, class F>
decltype(auto)
guard(C && context, F && f)
{
  try
  {
    return f();
  }
  catch (const Exception &)
  {
    throw;
  }
  catch (...)
  {
    if constexpr (std::is_invocable_v<C>)
      rethrow_normalized(context());
    else
      rethrow_normalized(context);
  }
}
} // namespace neml2::aoti
