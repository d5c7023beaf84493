internal import HomeModel
@_spi(Wire) internal import HomeWire
internal import NIOCore

// Running a call: routing its open frame, its deadline, and framing its answer.
extension ConnectionHandler {
    /// Calls of one grouped method that came in the current read and have not run.
    struct WaitingGroup {
        /// Calls run together at most: a group is one commit, and its first call
        /// waits for the last.
        static let largest = 256

        struct Call {
            let callID: UInt64
            let call: HomeRouter.GroupedCall
        }

        let method: String
        let handler: @Sendable ([HomeRouter.GroupedCall]) -> [EventLoopFuture<ByteBuffer>]
        var calls: [Call] = []
    }

    func dispatch(_ context: ChannelHandlerContext, callID: UInt64, _ open: IncomingCall) {
        let entry = router.route(for: open.method)
        // Calls run in the order they came: any other call runs the waiting group first.
        if !joinsWaitingGroup(entry, method: open.method) { runWaitingGroup() }
        guard let entry else {
            write(
                context,
                WireFrame(
                    callID: callID,
                    body: .status(
                        HomeError(
                            .unimplemented,
                            "unknown method '\(open.method)' (call \(callID)); this daemon serves \(router.methodNames.joined(separator: ", "))"
                        ))))
            return
        }
        // The role now, not at connecting: a reload applies to open connections too.
        let role = configuration.roles.role(of: peer)
        guard let role, role >= entry.role else {
            let denial = RolePolicy.denial(method: open.method, needs: entry.role, peer: peer, has: role)
            if deniedMethods.insert(open.method).inserted {
                noteDenial(
                    Origin(kind: .client, connectionID: connectionID, name: machine.clientName, uid: peer.uid),
                    denial.message)
            }
            write(context, WireFrame(callID: callID, body: .status(denial)))
            return
        }
        // A deadline of 0 has passed before the call begins: it is not run.
        if open.timeoutMs == 0 {
            write(
                context,
                WireFrame(
                    callID: callID,
                    body: .status(
                        HomeError(
                            .deadlineExceeded,
                            "call \(callID) (\(open.method)) has a timeout of 0 ms: its deadline passed before it began; nothing was done"
                        ))))
            return
        }
        let callContext = makeContext(context, callID: callID, timeoutMs: open.timeoutMs, role: role)
        do throws(HomeError) {
            switch entry.route {
            case .unary(let handler):
                try reply(context, callID: callID, payload: try handler(open.request, callContext))
            case .deferredUnary(let handler):
                machine.opened(callID, .unary)
                armDeadline(context, callID: callID, timeoutMs: open.timeoutMs, method: open.method)
                // The request is a slice of the connection's read buffer, which must
                // not be held while the answer waits: the future's closure keeps none.
                answer(context, callID: callID, method: open.method, when: handler(open.request, callContext))
            case .groupedUnary(let handler):
                machine.opened(callID, .unary)
                armDeadline(context, callID: callID, timeoutMs: open.timeoutMs, method: open.method)
                wait(inGroupOf: open.method, handler, callID: callID, open.request, callContext)
            case .serverStreaming(let handler):
                try machine.checkStreamLimit()
                let writer = CallWriter(
                    callID: callID, frameSize: machine.frameSize, connection: self, eventLoop: context.eventLoop)
                let stream = try handler(open.request, callContext, writer)
                machine.opened(callID, .stream(stream))
                registry.update(connectionID, openStreams: machine.openStreamCount)
                armDeadline(context, callID: callID, timeoutMs: open.timeoutMs, method: open.method)
            }
        } catch {
            if machine.ended(callID) != nil { deadlines.removeValue(forKey: callID)?.cancel() }
            write(context, WireFrame(callID: callID, body: .status(error)))
        }
    }

    /// Writes a deferred call's answer when its future completes (on this loop),
    /// unless the call ended meanwhile (its deadline, a cancel, the close).
    private func answer(
        _ context: ChannelHandlerContext, callID: UInt64, method: String, when future: EventLoopFuture<ByteBuffer>
    ) {
        let loopBound = NIOLoopBound(self, eventLoop: context.eventLoop)
        future.whenComplete { result in
            let handler = loopBound.value
            guard let context = handler.context, handler.machine.ended(callID) != nil else { return }
            handler.deadlines.removeValue(forKey: callID)?.cancel()
            do throws(HomeError) {
                switch result {
                case .success(let payload): try handler.reply(context, callID: callID, payload: payload)
                case .failure(let error as HomeError): throw error
                case .failure(let error): throw HomeError(.internal, "\(method) failed", cause: error)
                }
            } catch {
                handler.write(context, WireFrame(callID: callID, body: .status(error)))
            }
            // Answers that come within a read are flushed once, at its end.
            if !handler.reading { context.flush() }
        }
    }

    /// Holds a call of a grouped method until the read that brought it ends, a
    /// call of another method or another frame comes, or the group is full: then
    /// the group runs (`runWaitingGroup`).
    private func wait(
        inGroupOf method: String,
        _ handler: @escaping @Sendable ([HomeRouter.GroupedCall]) -> [EventLoopFuture<ByteBuffer>],
        callID: UInt64, _ request: ByteBuffer, _ callContext: CallContext
    ) {
        var group = waitingGroup.take() ?? WaitingGroup(method: method, handler: handler)
        group.calls.append(WaitingGroup.Call(callID: callID, call: .init(request: request, context: callContext)))
        waitingGroup = group
        if group.calls.count >= WaitingGroup.largest { runWaitingGroup() }
    }

    private func joinsWaitingGroup(_ entry: HomeRouter.Entry?, method: String) -> Bool {
        guard case .groupedUnary = entry?.route else { return false }
        return waitingGroup.map { $0.method == method } ?? true
    }

    /// Runs the calls of a grouped method that came together (see `HomeRouter.Route.groupedUnary`).
    func runWaitingGroup() {
        // Taken first: without a context the connection is gone, and so are its calls.
        guard let group = waitingGroup.take(), let context else { return }
        let answers = group.handler(group.calls.map(\.call))
        for (waiting, answer) in zip(group.calls, answers) {
            self.answer(context, callID: waiting.callID, method: group.method, when: answer)
        }
    }

    private func makeContext(_ context: ChannelHandlerContext, callID: UInt64, timeoutMs: UInt32?, role: Role)
        -> CallContext
    {
        let loopBound = NIOLoopBound(self, eventLoop: context.eventLoop)
        return CallContext(
            callID: callID, connectionID: connectionID, clientName: machine.clientName, peer: peer, role: role,
            eventLoop: context.eventLoop,
            deadline: timeoutMs.map { .now() + .milliseconds(Int64($0)) },
            session: NIOLoopBound(session, eventLoop: context.eventLoop),
            openStream: { loopBound.value.machine.stream($0) },
            streamEnded: { callID in
                let handler = loopBound.value
                guard handler.machine.ended(callID) != nil else { return }
                handler.deadlines.removeValue(forKey: callID)?.cancel()
                handler.registry.update(handler.connectionID, openStreams: handler.machine.openStreamCount)
            })
    }

    /// Ends a call that is still open when its deadline comes, with DEADLINE_EXCEEDED.
    private func armDeadline(_ context: ChannelHandlerContext, callID: UInt64, timeoutMs: UInt32?, method: String) {
        guard let timeoutMs else { return }
        deadlines[callID] = context.eventLoop.assumeIsolated().scheduleTask(in: .milliseconds(Int64(timeoutMs))) {
            [weak self] in
            guard let self, let context = self.context else { return }
            self.deadlines[callID] = nil
            let error = HomeError(
                .deadlineExceeded, "call \(callID) (\(method)) exceeded its deadline of \(timeoutMs) ms")
            switch self.machine.stream(callID) {
            case let stream?:
                // The stream ends itself with the status, and reports that it ended.
                stream.finish(with: error)
            case nil:
                guard self.machine.ended(callID) != nil else { return }
                self.write(context, WireFrame(callID: callID, body: .status(error)))
                context.flush()
            }
        }
    }

    /// Writes a unary response and its OK status as one buffer, unless the response
    /// would not fit in the frame size this connection negotiated.
    private func reply(_ context: ChannelHandlerContext, callID: UInt64, payload: ByteBuffer) throws(HomeError) {
        guard Self.messageFrameFits(callID: callID, payloadBytes: payload.readableBytes, frameSize: machine.frameSize)
        else {
            throw HomeError(
                .resourceExhausted,
                "response of \(payload.readableBytes) bytes exceeds the maximum frame size of \(machine.frameSize) "
                    + "bytes negotiated by this connection; ask for less (GetHome in pages with page_size, one home, fewer ids)"
            )
        }
        var out = context.channel.allocator.buffer(capacity: payload.readableBytes + 48)
        WireFrame.encodeMessage(callID: callID, payload: payload, into: &out)
        WireFrame.encodeOKStatus(callID: callID, into: &out)
        context.write(wrapOutboundOut(out), promise: nil)
    }
}
