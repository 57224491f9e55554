package bench

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"path/filepath"
	"slices"

	"github.com/patchproof/patchproof/internal/safefs"

	"github.com/patchproof/patchproof/internal/chart"
	"github.com/patchproof/patchproof/internal/side"
)

// SweepPoint is the cost of statistics at one thread count: a CPU block
// of its own, or the main block's at Options.Threads.
type SweepPoint struct {
	Threads     int  `json:"threads"`
	Connections int  `json:"connections"`
	KeepAlive   bool `json:"keep_alive"`
	// Main marks the count of the main block, whose samples are the
	// Result's; the others carry their own.
	Main      bool          `json:"main,omitempty"`
	DurationS float64       `json:"duration_s"`
	Passes    []Pass        `json:"passes,omitempty"`
	Arms      []*ArmSamples `json:"arms,omitempty"`
	// CPU is the CPU measure's statistics at this count.
	CPU *MeasureStats `json:"cpu,omitempty"`
}

// sweepCounts is the sweep's thread counts, ascending, Options.Threads
// among them; none without a sweep.
func (o Options) sweepCounts() []int {
	if len(o.Sweep) == 0 {
		return nil
	}
	counts := append(slices.Clone(o.Sweep), o.Threads)
	slices.Sort(counts)
	return slices.Compact(counts)
}

// sweepDecides says whether the sweep's blocks have the passes to decide
// the cost at their counts.
func (o Options) sweepDecides() bool { return o.SweepPasses >= o.sweepPassesToDecide() }

// sweepConnections is the load at n threads, by the rule of the main
// block's default (reportConnections, or half the threads in quick mode).
func (o Options) sweepConnections(n int) int {
	if o.Quick {
		return max(1, n/2)
	}
	return reportConnections(n)
}

// sweep runs a CPU block at each thread count of the sweep but the main
// one, whose samples the main block took.
func (b *bencher) sweep(ctx context.Context) error {
	o := b.opt
	if !o.wants(MeasureCPU) || !o.sweepDecides() {
		return nil // newResult warns of a sweep that cannot decide
	}
	counts := o.sweepCounts()
	for i, n := range counts {
		if n == o.Threads {
			b.res.Sweep = append(b.res.Sweep, &SweepPoint{Threads: n, Connections: o.Connections,
				KeepAlive: o.keepAliveWith(o.Connections, n), Main: true, DurationS: o.Duration.Seconds()})
			continue
		}
		bl := block{name: fmt.Sprintf("sweep-%02d", n), threads: n, connections: o.sweepConnections(n),
			passes: o.SweepPasses, perServer: o.PassesPerServer, duration: o.SweepDuration, warmup: min(o.Warmup, o.SweepDuration)}
		b.step("sweep %d of %d: %d threads, %d passes of %v", i+1, len(counts), n, bl.passes, bl.duration)
		pt := &SweepPoint{Threads: n, Connections: bl.connections, KeepAlive: o.keepAliveWith(bl.connections, bl.threads), DurationS: bl.duration.Seconds(), Passes: passOrders(o.arms(), bl.passes)}
		arms := o.arms()
		got, err := b.cpuBlock(ctx, bl, nil)
		for _, a := range arms {
			ra := &ArmSamples{Name: a.Arm, Build: a.Side, Statistics: onOff(a.Statistics)}
			for j, s := range got[a.Arm] {
				ra.Samples = append(ra.Samples, &Sample{Pass: j + 1, Position: slices.Index(pt.Passes[j].Order, a.Arm) + 1, CPU: s})
			}
			pt.Arms = append(pt.Arms, ra)
		}
		b.res.Sweep = append(b.res.Sweep, pt)
		if err != nil {
			return fmt.Errorf("sweep at %d threads: %w", n, err)
		}
	}
	return nil
}

// sweepChartName is the chart's file in Options.Dir.
const sweepChartName = "sweep.svg"

// ScalingChart is the cost of statistics in CPU time against the thread
// count, a line per build: the Hodges-Lehmann estimate of the per-pass
// on/off ratio, as a percentage, with its interval where the passes give
// one.
func (r *Result) ScalingChart() chart.Chart {
	c := chart.Chart{
		Title:  fmt.Sprintf("CPU cost of mysqlnd statistics by PHP threads (%s)", r.Workload),
		XLabel: "PHP threads", YLabel: "CPU cost of statistics, %", LogX: true,
	}
	for _, b := range r.Builds {
		s := chart.Series{Name: string(b.Name)}
		for _, pt := range r.Sweep {
			p := chart.Point{X: float64(pt.Threads), Y: math.NaN()}
			if cs, ok := pt.cost(b.Name); ok && cs.Of == "ratio" && cs.HodgesLehmann.N > 0 {
				hl := cs.HodgesLehmann
				p.Y = 100 * (hl.Median - 1)
				if hl.Lo != 0 || hl.Hi != 0 {
					p.Lo, p.Hi, p.HasInterval = 100*(hl.Lo-1), 100*(hl.Hi-1), hl.Lo <= hl.Median && hl.Median <= hl.Hi
				}
			}
			s.Points = append(s.Points, p)
		}
		c.Series = append(c.Series, s)
	}
	return c
}

// cost is the CPU cost of statistics in build at this count.
func (pt *SweepPoint) cost(build side.Side) (CostStats, bool) {
	if pt.CPU == nil {
		return CostStats{}, false
	}
	for _, c := range pt.CPU.Costs {
		if c.Build == build {
			return c, true
		}
	}
	return CostStats{}, false
}

// writeSweepChart writes the sweep's chart into dir, when there is a sweep.
func (r *Result) writeSweepChart(dir string) error {
	if len(r.Sweep) == 0 {
		return nil
	}
	var buf bytes.Buffer
	if err := chart.SVG(&buf, r.ScalingChart()); err != nil {
		return fmt.Errorf("sweep chart: %w", err)
	}
	path := filepath.Join(dir, sweepChartName)
	if err := safefs.WritePath(path, buf.Bytes(), 0o644); err != nil {
		return fmt.Errorf("sweep chart: %w", err)
	}
	r.SweepChart = path
	return nil
}
