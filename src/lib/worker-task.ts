/** How a task on a thread of its own ended: its answer, or no answer by the deadline, or a thread that died. */
export type WorkerTaskResult<T> = { ok: true; value: T } | { ok: false; reason: 'timed_out' | 'crashed'; detail: string }

/**
 * Runs one task on a worker thread started for it: posts `message` (moving `transfer`), takes the first
 * message back as the answer, and ends the thread. Past `deadlineMs`, counted from the start, the thread is
 * terminated wherever it is (a wasm or JavaScript loop included) and the answer is 'timed_out': the work a
 * task may cost is bounded by the clock, and it never runs on the caller's event loop. Never rejects.
 */
export function runWorkerTask<T>(url: URL, message: unknown, transfer: Transferable[], deadlineMs: number): Promise<WorkerTaskResult<T>> {
  return new Promise((resolve) => {
    let worker: Worker
    try {
      worker = new Worker(url)
    } catch (cause) {
      resolve({ ok: false, reason: 'crashed', detail: cause instanceof Error ? cause.message : String(cause) })
      return
    }
    const finish = (result: WorkerTaskResult<T>) => {
      clearTimeout(timer)
      worker.terminate()
      resolve(result)
    }
    const timer = setTimeout(() => finish({ ok: false, reason: 'timed_out', detail: `no answer within ${deadlineMs} ms` }), deadlineMs)
    worker.onmessage = (event: MessageEvent<T>) => finish({ ok: true, value: event.data })
    worker.onerror = (event: ErrorEvent) => {
      event.preventDefault()
      finish({ ok: false, reason: 'crashed', detail: event.message || 'the worker thread failed' })
    }
    worker.postMessage(message, transfer)
  })
}
