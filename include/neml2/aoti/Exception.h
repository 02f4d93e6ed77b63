// The error contract: every exception that leaves the library is a neml2::aoti::Exception.
#pragma once

#include <algorithm>
#include <exception>
#include <memory>
#include <new>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include <c10/util/Exception.h>

#include "neml2/aoti/types.h"

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
 * @brief The points of one call whose implicit solve did not converge, in the numbering of
 * the caller's batch: what a host needs to cut the step only where it must, or to dump those
 * points' inputs.
 *
 * Every tensor is on the CPU, whatever device solved the points.
 */
struct FailedPoints
{
  /// @brief Points in the caller's call (B): the length of converged().
  int64_t batch = 0;
  /// @brief (K,) int64: the failed points' rows in the caller's batch, ascending.
  at::Tensor rows;
  /// @brief (K,) in the model's dtype: each failed point's final residual norm.
  at::Tensor residual;

  /// @brief (B,) bool: true where the point converged, false at rows.
  at::Tensor converged() const
  {
    at::Tensor mask = at::ones({batch}, at::TensorOptions().dtype(at::kBool));
    if (rows.defined() && rows.numel() > 0)
      mask.index_fill_(0, rows, false);
    return mask;
  }

  /**
   * @brief The failed points of several parts of one call (disjoint row sets, such as the
   * chunks of a dispatch), as one: rows in ascending order with their residuals.
   */
  static FailedPoints merge(const std::vector<const FailedPoints *> & parts)
  {
    FailedPoints out;
    std::vector<at::Tensor> rows, residual;
    for (const FailedPoints * p : parts)
    {
      out.batch = std::max(out.batch, p->batch);
      rows.push_back(p->rows);
      residual.push_back(p->residual);
    }
    if (rows.empty())
      return out;
    const auto [sorted, order] = at::sort(at::cat(rows));
    out.rows = sorted;
    out.residual = at::cat(residual).index_select(0, order);
    return out;
  }
};

/**
 * @brief A nonlinear solve diverged or hit its iteration cap (recoverable).
 *
 * Thrown for a chunk in which at least one material point did not converge;
 * the message says how many points failed out of how many and the worst residual.
 * An error raised from a graph's status also names the failed points (points()): a
 * dispatch does not stop at such a chunk but runs the rest of the batch, so that the
 * error, or the AggregateError of every failed chunk, covers the caller's whole batch.
 */
class ConvergenceError : public Exception
{
public:
  /// @brief Construct with the full message, naming no points.
  explicit ConvergenceError(const std::string & message) : Exception(message) {}
  /// @brief Construct with the full message and the failed points it is about.
  ConvergenceError(const std::string & message, FailedPoints points)
    : Exception(message),
      _points(std::make_shared<const FailedPoints>(std::move(points)))
  {
  }

  /// @brief The points that failed, over the caller's whole batch; null where the error
  /// names none (one made from a message alone).
  const FailedPoints * points() const noexcept { return _points.get(); }
  /// @copydoc Exception::recoverable
  bool recoverable() const noexcept override { return true; }
  /// @copydoc Exception::clone
  std::shared_ptr<const Exception> clone() const override
  {
    return std::make_shared<ConvergenceError>(*this);
  }
  /// @copydoc Exception::rethrow
  [[noreturn]] void rethrow() const override { throw *this; }

private:
  // Shared, so that copies (clone(), rethrow()) never copy tensors and never throw.
  std::shared_ptr<const FailedPoints> _points;
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

  /**
   * @brief The failed points of every ConvergenceError among errors() that names its
   * points, merged over the caller's batch (FailedPoints::merge); none where no error
   * names points.
   */
  std::optional<FailedPoints> points() const
  {
    std::vector<const FailedPoints *> parts;
    for (const auto & e : _errors)
      if (const auto * c = dynamic_cast<const ConvergenceError *>(e.get()); c && c->points())
        parts.push_back(c->points());
    if (parts.empty())
      return std::nullopt;
    return FailedPoints::merge(parts);
  }

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
 * @brief The failed points an error names, whichever form it took: a ConvergenceError's,
 * or an AggregateError's merged over its chunks; none for any other error, or one that
 * names no points.
 *
 * @code
 * catch (const neml2::aoti::Exception & e)
 * {
 *   if (!e.recoverable()) throw;
 *   if (auto failed = neml2::aoti::failed_points(e))
 *     cut_step_where(failed->converged().logical_not());
 * }
 * @endcode
 */
inline std::optional<FailedPoints>
failed_points(const Exception & e)
{
  if (const auto * c = dynamic_cast<const ConvergenceError *>(&e); c && c->points())
    return *c->points();
  if (const auto * a = dynamic_cast<const AggregateError *>(&e))
    return a->points();
  return std::nullopt;
}

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
