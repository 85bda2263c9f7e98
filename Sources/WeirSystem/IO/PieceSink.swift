import Dispatch

/// Where a pipeline's numbered output pieces go: an ``OrderedWriter`` (a
/// descriptor, through DispatchIO) or a ``StreamSink`` (an async consumer).
///
/// The contract both keep: pieces leave in number order, whatever order they
/// are submitted in; every piece submitted is reported once to the handler
/// the sink was given — with its size when it has left, or -1 when it was
/// dropped after a failure — which is what frees its in-flight place.
package protocol PieceSink: AnyObject, Sendable {
    /// Hands piece `index` over. Every index from 0 up is submitted once.
    /// Callable from any thread.
    func submit(_ index: Int, _ data: DispatchData)
    /// Drops every piece not yet out, and any that arrives later.
    func abandon()
    /// Drops the pieces after `index`, now and when they arrive; the ones
    /// before it still go out (piece `index` itself never comes: the run
    /// was cut there, ``RunControl/fail(_:atPiece:)``).
    func abandon(after index: Int)
    /// Ends the output: with `stop`, pieces under way end as well.
    func close(stop: Bool)
}

extension OrderedWriter: PieceSink {}
