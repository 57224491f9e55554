package bench

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	"github.com/patchproof/patchproof/workloads/load"
	"github.com/patchproof/patchproof/workloads/perfprof"
)

// ArmProfile is where an arm's server spent its CPU under load: a perf
// profile of its processes (software cpu-clock: these machines have no
// hardware counters), or why there is none.
type ArmProfile struct {
	Arm     Arm               `json:"arm"`
	Profile *perfprof.Profile `json:"profile,omitempty"`
	Error   string            `json:"error,omitempty"`
}

// profileLead is how long the load runs before perf starts, so that the
// profile sees the server busy from its first sample.
const profileLead = 500 * time.Millisecond

// profiles takes one profile per arm on the main block's warm servers,
// under the block's load. A profile that fails is a warning: the verdicts
// do not rest on it.
func (b *bencher) profiles(ctx context.Context, servers []*blockServer) error {
	for _, bs := range servers {
		ap := &ArmProfile{Arm: bs.arm.Arm}
		b.res.Profiles = append(b.res.Profiles, ap)
		p, err := b.profile(ctx, bs)
		if err != nil {
			ap.Error = err.Error()
			b.res.Warnings = append(b.res.Warnings, fmt.Sprintf("no profile of %s: %v", bs.arm, err))
			continue
		}
		ap.Profile = p
		b.step("%s profile: %d samples, %.1f%% in lock functions", bs.arm, p.Samples, 100*p.LockShare)
	}
	return ctx.Err()
}

func (b *bencher) profile(ctx context.Context, bs *blockServer) (*perfprof.Profile, error) {
	o := b.opt
	lo := load.Options{
		Wrk: o.Wrk, Threads: o.LoadThreads, Connections: o.Connections,
		Duration: (o.ProfileDuration + profileLead + time.Second).Truncate(time.Second),
		Headers:  o.Workload.HeaderLines(), CPUs: o.LoadCPUs, Log: o.Log,
	}
	done := make(chan error, 1)
	go func() {
		_, err := load.Run(ctx, bs.srv.URL(o.Workload.Path), lo)
		done <- err
	}()
	time.Sleep(profileLead)
	p, perr := perfprof.Record(ctx, bs.srv.PID, perfprof.Options{
		Perf: o.Perf, Duration: o.ProfileDuration, Dir: filepath.Join(o.Dir, "profile", bs.arm.String()),
		Log: o.Log, Title: fmt.Sprintf("%s, %s, %d threads", o.Workload.Name, bs.arm, o.Threads),
	})
	if err := <-done; err != nil && perr == nil {
		perr = fmt.Errorf("load: %w", err)
	}
	return p, perr
}
