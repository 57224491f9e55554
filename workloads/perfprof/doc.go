// Package perfprof finds where a running server's CPU time goes: it samples
// a process with perf record, folds the call stacks perf script prints,
// and summarises them as the functions that were on the CPU most (self
// samples), the share of samples spent in locks, and a flame graph.
//
// It owns the whole path from a PID to a [Profile]: running perf
// ([Record]), reading its text ([Parse] into [Stacks]), the summaries
// ([Stacks.Top], [Stacks.Locks]) and the rendering ([WriteFlamegraph],
// [Stacks.WriteFolded]). It does not start or load the server.
//
// The event is cpu-clock, a software timer: these VMs expose no hardware
// counters, so perf's default (cycles) cannot be opened, and cpu-clock
// samples a thread only while it runs on a CPU, which is what "where the
// CPU goes" means: threads blocked in epoll_wait or on a futex cost no
// samples, a thread spinning or in a contended lock's syscall does.
//
// Call stacks are unwound with frame pointers (perf record -g): cheap
// enough to leave running under load, but a library built without frame
// pointers shows its functions as leaves with few callers. Self samples,
// and so Top and the lock share, do not depend on the unwinding.
//
// A server is often more than one process: Apache's event MPM serves from
// children of the PID that was started. Record profiles the process and its
// descendants alive when recording starts, every thread of each. A process
// in another PID or mount namespace (a container) is profiled by its host
// PID; perf finds its binaries through /proc/PID/root, which is why the
// stacks are read (perf script) right after recording, while the process
// still lives. A frame perf cannot name shows as its DSO ("[libc.so.6]")
// or "[unknown]", never as an error.
package perfprof
