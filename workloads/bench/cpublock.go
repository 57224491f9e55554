package bench

import (
	"context"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"time"

	"github.com/patchproof/patchproof/internal/benchstat"
	"github.com/patchproof/patchproof/workloads/cputime"
	"github.com/patchproof/patchproof/workloads/httpd"
	"github.com/patchproof/patchproof/workloads/load"
)

// A block is a CPU block's settings: many short passes against warm
// servers, one per arm, so that the on and off windows of a pass are
// seconds apart, not minutes, and a server's start-up never lands in a
// window.
type block struct {
	name        string // its directory under Options.Dir
	threads     int
	connections int
	passes      int
	perServer   int // passes a server serves before the next round's
	duration    time.Duration
	warmup      time.Duration
}

// blockServer is an arm's warm server in a block.
type blockServer struct {
	arm   arm
	srv   *httpd.Server
	cg    *cputime.Cgroup
	meter cputime.Meter
}

// cpuBlock runs bl.passes passes, every arm once a pass in the balanced
// order, on servers started and warmed for every bl.perServer passes, and
// returns each arm's samples by pass (index 0 is pass 1). with, when set,
// is called with the last round's warm servers after its passes (the
// profiles use them).
//
// A server's own state (which threads hold which connections, how the
// scheduler settled them on the CPU) shifts its CPU time a request by a
// few percent for as long as it runs, the same for every window it
// serves; fresh servers every pass or two make that shift one more noise
// of a pair, nearly independent from pair to pair, instead of a bias of
// the whole run that the test on the pairs cannot see. The windows are
// short because the noise that remains moves with the machine's load over
// seconds: the closer a pair's two windows, the more of it they share and
// the ratio cancels.
func (b *bencher) cpuBlock(ctx context.Context, bl block, with func(context.Context, []*blockServer) error) (map[Arm][]*CPUSample, error) {
	per := max(1, bl.perServer)
	rounds := max(1, (bl.passes+per-1)/per) // one round for profiles alone
	out := map[Arm][]*CPUSample{}
	for r := range rounds {
		first, last := r*per+1, min(bl.passes, (r+1)*per)
		err := b.round(ctx, bl, r+1, func(byArm map[arm]*blockServer, servers []*blockServer) error {
			lo := b.loadOptions(bl)
			for p := first; p <= last; p++ {
				for _, a := range balancedOrder(b.opt.arms(), p) {
					s, err := b.cpuWindow(ctx, byArm[a], lo)
					if err != nil {
						return fmt.Errorf("pass %d, %s: %w", p, a, err)
					}
					out[a.Arm] = append(out[a.Arm], s)
					b.step("%s: pass %d of %d, %s: %.1f req/s, %.4f ms CPU a request (%.4f user, %.4f system)%s",
						bl.name, p, bl.passes, a, s.RequestsPerSec, s.CPUMsPerRequest, s.UserMsPerRequest, s.SystemMsPerRequest, stealNote(s))
				}
			}
			if with != nil && r == rounds-1 {
				return with(ctx, servers)
			}
			return nil
		})
		if err != nil {
			return out, err
		}
	}
	return out, nil
}

// round starts and warms one server per arm, calls run with them, and
// stops them.
func (b *bencher) round(ctx context.Context, bl block, n int, run func(map[arm]*blockServer, []*blockServer) error) (err error) {
	o := b.opt
	var servers []*blockServer
	defer func() {
		// Servers first: a cgroup must be empty before it is removed.
		for _, bs := range servers {
			err = b.stopServer(bs.arm, bs.srv, err)
		}
		for _, bs := range servers {
			if bs.cg != nil {
				if cerr := bs.cg.Close(); cerr != nil && err == nil {
					err = cerr
				}
			}
		}
	}()
	byArm := map[arm]*blockServer{}
	for _, a := range o.arms() {
		bs, err := b.blockServer(ctx, a, bl, n)
		if bs != nil && bs.srv != nil {
			servers = append(servers, bs)
		} else if bs != nil && bs.cg != nil {
			bs.cg.Close()
		}
		if err != nil {
			return fmt.Errorf("%s: %w", a, err)
		}
		byArm[a] = bs
	}
	if bl.warmup > 0 {
		warm := b.loadOptions(bl)
		warm.Duration = bl.warmup
		for _, bs := range servers {
			if _, err := load.Run(ctx, bs.srv.URL(o.Workload.Path), warm); err != nil {
				return fmt.Errorf("%s: warm-up: %w", bs.arm, err)
			}
		}
	}
	return run(byArm, servers)
}

// blockServer starts an arm's server for a block, in a cgroup of its own
// where one can be made.
func (b *bencher) blockServer(ctx context.Context, a arm, bl block, round int) (*blockServer, error) {
	o := b.opt
	so := b.serverOptions(a, filepath.Join(o.ServerDir, bl.name, fmt.Sprintf("round-%02d", round), a.String()))
	so.Threads = bl.threads
	so.KeepAliveOff = !o.keepAliveWith(bl.connections, bl.threads)
	// A block's servers run at once: in one container's network
	// namespace, a port each.
	so.Placement = so.Placement.WithPort(blockPort + slices.Index(o.arms(), a))
	if so.Placement.ASLROff() == nil && !o.KeepASLR {
		// The same address layout in every server and every run: one
		// source of variance between arms less.
		so.Wrap = []string{"setarch", "-R"}
	}
	bs := &blockServer{arm: a}
	if b.cgroupOK {
		cg, err := cputime.NewCgroup(fmt.Sprintf("patchproof-bench-%s-%s-%d-%s", b.nonce, bl.name, round, a))
		if err != nil {
			return nil, err
		}
		bs.cg = cg
		so.CgroupFD = cg.FD()
	}
	s, err := httpd.Start(ctx, so)
	if err != nil {
		return bs, err
	}
	bs.srv = s
	bs.meter = cputime.ProcessGroup(s.PID)
	if bs.cg != nil {
		bs.meter = bs.cg
	}
	if m := s.Meter(); m != nil {
		bs.meter = m
	}
	return bs, nil
}

func (b *bencher) loadOptions(bl block) load.Options {
	o := b.opt
	return load.Options{
		Wrk: o.Wrk, Threads: min(o.LoadThreads, bl.connections), Connections: bl.connections,
		Duration: bl.duration, Headers: o.Workload.HeaderLines(), CPUs: o.LoadCPUs, Log: o.Log,
	}
}

// answerTimeout is how long a server has to answer before a window, and
// slowAnswer the answer that is told; a request takes under a millisecond.
const (
	answerTimeout = 30 * time.Second
	slowAnswer    = 500 * time.Millisecond
)

// blockPort is the first port of a block's servers in containers.
const blockPort = 8081

// heavySteal is the share of the machine's CPU time taken by the
// hypervisor above which a window is flagged: its CPU time per request is
// inflated by time the guest never saw.
const heavySteal = 0.05

// cpuWindow runs one measured wrk run against a warm server, between two
// reads of its CPU time, context switches and the machine's steal.
func (b *bencher) cpuWindow(ctx context.Context, bs *blockServer, lo load.Options) (*CPUSample, error) {
	select {
	case <-bs.srv.Exited():
		return nil, errors.New("the server had exited")
	default:
	}
	// Every window starts on a server that has just answered: one that
	// does not is an error that names the server, not a window of no
	// requests. A slow answer is told, as a sign of trouble.
	t0 := time.Now()
	if err := bs.srv.Answers(ctx, answerTimeout); err != nil {
		return nil, err
	}
	if d := time.Since(t0); d > slowAnswer {
		b.step("%s: the server took %v to answer before the window", bs.arm, d.Round(time.Millisecond))
	}
	sys0, err := cputime.ReadSystem()
	if err != nil {
		return nil, err
	}
	sw0, err := cputime.TreeSwitches(bs.srv.PID)
	if err != nil {
		return nil, err
	}
	u0, err := bs.meter.Usage()
	if err != nil {
		return nil, err
	}
	r, err := load.Run(ctx, bs.srv.URL(b.opt.Workload.Path), lo)
	if pe := (*load.PassError)(nil); errors.As(err, &pe) {
		// wrk ran, the server did not serve: what it said is the why.
		return nil, fmt.Errorf("%w; %s", err, bs.srv.LogTail())
	}
	if err != nil {
		return nil, err
	}
	u1, err := bs.meter.Usage()
	if err != nil {
		return nil, err
	}
	sw1, err := cputime.TreeSwitches(bs.srv.PID)
	if err != nil {
		return nil, err
	}
	sys1, err := cputime.ReadSystem()
	if err != nil {
		return nil, err
	}
	u, sw := u1.Sub(u0), sw1.Sub(sw0)
	n := float64(r.Requests)
	smp := &CPUSample{
		Requests:                      r.Requests,
		DurationS:                     r.Duration.Seconds(),
		CPUSeconds:                    u.Total.Seconds(),
		CPUMsPerRequest:               1000 * u.Total.Seconds() / n,
		UserMsPerRequest:              1000 * u.User.Seconds() / n,
		SystemMsPerRequest:            1000 * u.System.Seconds() / n,
		VoluntarySwitchesPerRequest:   float64(sw.Voluntary) / n,
		InvoluntarySwitchesPerRequest: float64(sw.Involuntary) / n,
		StealShare:                    cputime.StealShare(sys0, sys1),
		RequestsPerSec:                r.RequestsPerSec,
		LatencyAvgMs:                  ms(r.Latency.Avg),
	}
	if sys0.HasPressure && sys1.HasPressure && r.Duration > 0 {
		smp.PressureShare = float64(sys1.PressureSome-sys0.PressureSome) / float64(r.Duration)
	}
	smp.HeavySteal = smp.StealShare > heavySteal
	if p, ok := r.Latency.Percentile(50); ok {
		smp.LatencyP50Ms = ms(p)
	}
	if p, ok := r.Latency.Percentile(99); ok {
		smp.LatencyP99Ms = ms(p)
	}
	return smp, nil
}

func stealNote(s *CPUSample) string {
	if s.HeavySteal {
		return fmt.Sprintf(", %.1f%% stolen (flagged)", 100*s.StealShare)
	}
	return ""
}

// heavySteal counts the main block's windows flagged for steal, of all.
func (r *Result) heavySteal() (n, of int) {
	for _, a := range r.Arms {
		for _, s := range a.Samples {
			if s.CPU != nil {
				of++
				if s.CPU.HeavySteal {
					n++
				}
			}
		}
	}
	return n, of
}

// serverOf is the round of servers pass p (from 1) of a CPU block ran on,
// from 0: a block's servers serve perServer passes each.
func serverOf(p, perServer int) int { return (p - 1) / max(1, perServer) }

// byServer averages the paired samples over the passes of one server:
// passes[i] is the pass value i of every sample came from. The passes of
// one round share its servers' offsets (which threads hold which
// connections, where the scheduler settled them), so they are not
// independent pairs: counted as such, half the variance a server's own,
// a paired test's false rate doubles. One value a round is. The mean is
// geometric where every value is positive, so that the log ratio of two
// rounds' means is the mean of their passes' log ratios, else
// arithmetic; a round's arms are averaged over the same passes.
func byServer(samples []benchstat.Sample, passes []int, perServer int) []benchstat.Sample {
	if perServer <= 1 {
		return samples
	}
	positive := true
	for _, s := range samples {
		for _, v := range s.Values {
			positive = positive && v > 0
		}
	}
	out := make([]benchstat.Sample, len(samples))
	for lo := 0; lo < len(passes); {
		hi := lo + 1
		for hi < len(passes) && serverOf(passes[hi], perServer) == serverOf(passes[lo], perServer) {
			hi++
		}
		for i, s := range samples {
			var sum float64
			for _, v := range s.Values[lo:hi] {
				if positive {
					v = math.Log(v)
				}
				sum += v
			}
			mean := sum / float64(hi-lo)
			if positive {
				mean = math.Exp(mean)
			}
			out[i].Values = append(out[i].Values, mean)
		}
		lo = hi
	}
	return out
}
