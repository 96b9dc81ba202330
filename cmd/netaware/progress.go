package main

import (
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"
)

// quietFlag is the global --quiet: no progress on stderr.
func quietFlag(cmd *cobra.Command) bool {
	q, _ := cmd.Flags().GetBool("quiet")
	return q
}

// progressReporter draws a progress bar with an ETA on stderr once a step
// has run for a couple of seconds (short steps stay silent), from the
// counts a library hook reports: the libraries never read the wall clock,
// the ETA is computed here. Safe for the hooks of ranks running as
// goroutines of this process.
type progressReporter struct {
	mu    sync.Mutex
	w     io.Writer
	quiet bool
	start time.Time
	bar   *progressbar.ProgressBar
	desc  string
	// The first count seen and when: the ETA extrapolates the rate since
	// then, so that work done before (the pairs a resumed campaign kept)
	// does not pass for speed.
	base     int
	baseTime time.Time
}

func (p *progressReporter) update(done, total int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.quiet {
		return
	}
	now := time.Now()
	if p.baseTime.IsZero() {
		p.base, p.baseTime = done, now
	}
	if p.bar == nil {
		if now.Sub(p.start) < 2*time.Second || done >= total {
			return
		}
		p.bar = progressbar.NewOptions(total,
			progressbar.OptionSetWriter(p.w),
			progressbar.OptionSetDescription(p.desc),
			progressbar.OptionShowCount(),
			progressbar.OptionSetPredictTime(false),
			progressbar.OptionSetElapsedTime(true),
			progressbar.OptionThrottle(200*time.Millisecond),
			progressbar.OptionClearOnFinish(),
		)
	}
	_ = p.bar.Set(done)
	p.bar.Describe(p.describeETA(done, total, now))
}

// describeETA is the bar's text with the time left at the rate since the
// first count (none before a count has moved).
func (p *progressReporter) describeETA(done, total int, now time.Time) string {
	el := now.Sub(p.baseTime)
	if done <= p.base || el <= 0 || done >= total {
		return p.desc
	}
	left := time.Duration(float64(el) * float64(total-done) / float64(done-p.base))
	return fmt.Sprintf("%s, ETA %s", p.desc, left.Round(time.Second))
}

// describe changes the bar's text (who is still missing, say).
func (p *progressReporter) describe(desc string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.desc = desc
	if p.bar != nil {
		p.bar.Describe(desc)
	}
}

func (p *progressReporter) finish() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.bar != nil {
		_ = p.bar.Finish()
		p.bar = nil
	}
}

// phaseProgress shows a job of several phases on stderr: a line as each
// phase starts, with the time since the job started, and the phase's bar
// from its counts (discover.Options.Progress and Advance).
type phaseProgress struct {
	mu    sync.Mutex
	w     io.Writer
	quiet bool
	start time.Time
	cur   *progressReporter
}

func (p *phaseProgress) phase(name string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.quiet {
		return
	}
	if p.cur != nil {
		p.cur.finish()
	}
	fmt.Fprintf(p.w, "[%5.1fs] %s\n", time.Since(p.start).Seconds(), name)
	p.cur = &progressReporter{w: p.w, start: time.Now(), desc: name}
}

func (p *phaseProgress) advance(done, total int) {
	p.mu.Lock()
	cur := p.cur
	p.mu.Unlock()
	if cur != nil {
		cur.update(done, total)
	}
}

func (p *phaseProgress) finish() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cur != nil {
		p.cur.finish()
		p.cur = nil
	}
}
