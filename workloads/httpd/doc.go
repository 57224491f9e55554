// Package httpd owns the threaded PHP server a benchmark loads: Debian's
// Apache 2.4 with mpm_event in one process of N threads, running a ZTS
// build's mod_php (libs/libphp.so, loaded straight from the build tree).
//
// [Start] writes everything the server needs into its run dir — httpd.conf
// (its own ServerRoot, PidFile, ErrorLog, DefaultRuntimeDir, Listen on a
// free loopback port, StartServers 1, ServerLimit 1, ThreadsPerChild,
// ThreadLimit and MaxRequestWorkers N, KeepAlive with no request limit),
// php.ini (Options.INI: mysqlnd.collect_statistics on or off) and the
// document root — starts apache2 -DFOREGROUND in a process group of its own,
// and waits until a real request answers as Options.Probe expects. Stop, or
// cancelling the context given to Start, stops it: SIGTERM (Apache's own
// orderly stop), then SIGKILL to the whole process group after
// Options.StopTimeout. A server dies with patchproof (Pdeathsig).
//
// The hooks a benchmark needs: Options.Environ (LD_PRELOAD of a lock
// counter), Options.Wrap (valgrind), Options.CPUs (taskset), Options.Cgroup
// (start the server inside a cgroup v2, for its CPU time), and
// Options.SingleProcess (apache2 -X: one process, as callgrind wants).
//
// Run as root, Apache's child switches to Options.User (www-data): the run
// dir and the directories above it must let that user through, which Start
// checks, and files the child writes (lock tables, callgrind dumps) need
// directories it may write.
//
// Apache's event MPM closes a kept-alive connection whose next request
// arrives while no worker thread is idle ("If we don't get a worker
// immediately (nonblocking), we close the connection", server/mpm/event):
// a load of more connections than threads then sees socket errors. Keep
// connections below Threads with keep-alive on, or set KeepAliveOff.
//
// Options.Placement says where the server runs: on this host (Host, the
// default) or in a container of a local image (*Container, whose servers
// are KindApacheDocker). Callers ask the placement what differs (the
// paths a container must bind, whether ASLR can be turned off, what
// measures CPU time), never which it is.
//
// Options.Kind is the seam for other servers: KindFrankenPHP (worker mode,
// as in the report) needs an image no registry here can serve; Start
// answers it with an *UnavailableError, which callers report as a skip.
package httpd
