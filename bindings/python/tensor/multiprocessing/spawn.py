"""torch.multiprocessing.spawn: run fn(i, *args) in nprocs processes and propagate failures."""
import multiprocessing
import multiprocessing.connection
import signal
import sys
import traceback


class ProcessException(Exception):
    __slots__ = ["error_index", "error_pid"]

    def __init__(self, msg, error_index, pid):
        super().__init__(msg)
        self.msg = msg
        self.error_index = error_index
        self.pid = pid

    def __reduce__(self):
        return type(self), (self.msg, self.error_index, self.pid)


class ProcessRaisedException(ProcessException):
    """A spawned process raised: the message carries its traceback."""


class ProcessExitedException(ProcessException):
    """A spawned process exited with a non-zero code or was killed by a signal."""

    __slots__ = ["exit_code", "signal_name"]

    def __init__(self, msg, error_index, error_pid, exit_code, signal_name=None):
        super().__init__(msg, error_index, error_pid)
        self.exit_code = exit_code
        self.signal_name = signal_name

    def __reduce__(self):
        return type(self), (self.msg, self.error_index, self.pid, self.exit_code, self.signal_name)


def _wrap(fn, i, args, error_queue):
    try:
        fn(i, *args)
    except KeyboardInterrupt:
        pass
    except Exception:
        error_queue.put(traceback.format_exc())
        sys.exit(1)


class ProcessContext:
    def __init__(self, processes, error_queues):
        self.error_queues = error_queues
        self.processes = processes
        self.sentinels = {process.sentinel: index for index, process in enumerate(processes)}

    def pids(self):
        return [int(process.pid) for process in self.processes]

    def join(self, timeout=None):
        """Waits for the processes; True when all exited cleanly, False while some run. The
        first failure terminates the others and raises ProcessRaisedException (with the
        child's traceback) or ProcessExitedException."""
        if not self.sentinels:
            return True
        ready = multiprocessing.connection.wait(self.sentinels.keys(), timeout=timeout)
        error_index = None
        for sentinel in ready:
            index = self.sentinels.pop(sentinel)
            process = self.processes[index]
            process.join()
            if process.exitcode != 0:
                error_index = index
                break
        if error_index is None:
            return len(self.sentinels) == 0
        for process in self.processes:
            if process.is_alive():
                process.terminate()
            process.join()
        failed = self.processes[error_index]
        if self.error_queues[error_index].empty():
            code = failed.exitcode
            if code < 0:
                name = signal.Signals(-code).name
                raise ProcessExitedException(f"process {error_index} terminated with signal {name}",
                                             error_index=error_index, error_pid=failed.pid, exit_code=code,
                                             signal_name=name)
            raise ProcessExitedException(f"process {error_index} terminated with exit code {code}",
                                         error_index=error_index, error_pid=failed.pid, exit_code=code)
        original_trace = self.error_queues[error_index].get()
        msg = f"\n\n-- Process {error_index} terminated with the following error:\n" + original_trace
        raise ProcessRaisedException(msg, error_index, failed.pid)


def start_processes(fn, args=(), nprocs=1, join=True, daemon=False, start_method="spawn"):
    mp = multiprocessing.get_context(start_method)
    error_queues, processes = [], []
    for i in range(nprocs):
        error_queue = mp.SimpleQueue()
        process = mp.Process(target=_wrap, args=(fn, i, args, error_queue), daemon=daemon)
        process.start()
        error_queues.append(error_queue)
        processes.append(process)
    context = ProcessContext(processes, error_queues)
    if not join:
        return context
    while not context.join():
        pass


def spawn(fn, args=(), nprocs=1, join=True, daemon=False, start_method="spawn"):
    """Runs fn(i, *args) for i in range(nprocs), each in its own process (PyTorch's spawn);
    returns a ProcessContext when join is False."""
    return start_processes(fn, args, nprocs, join, daemon, start_method)
