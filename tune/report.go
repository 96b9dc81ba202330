package tune

import (
	"cmp"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"netaware/coll"
	"netaware/internal/atomicfile"
	"netaware/topo"
)

// ReportVersion is the bench.json format version.
const ReportVersion = 1

// Report is bench.json: every measurement and the choices made from them.
type Report struct {
	Version  int    `json:"version"`
	Platform string `json:"platform"`
	// Ranks is the platform's rank count; measurements and choices say
	// which communicator size (ranks 0..q-1) they are for.
	Ranks int `json:"ranks"`
	// TopologySource says where the topology-aware algorithms' topology
	// came from ("platform ground truth", a file name, or "none").
	TopologySource string        `json:"topology_source"`
	Root           int           `json:"root"`
	Reps           int           `json:"reps"`
	Warmup         int           `json:"warmup"`
	SizesBytes     []int         `json:"sizes_bytes"`
	Measurements   []Measurement `json:"measurements"`
	Choices        []Choice      `json:"choices"`
}

// LibChoice is what a library's rules file selects at one size.
type LibChoice struct {
	// Algorithm is ours that the library runs (or approximates).
	Algorithm coll.Algorithm `json:"algorithm"`
	Label     string         `json:"label"`
	// Library names the library's algorithm.
	Library string  `json:"library_algorithm"`
	MeanS   float64 `json:"mean_s"`
	// Exact is false when the library's algorithm only approximates ours.
	Exact bool `json:"exact"`
	// SameAsBest tells whether the library can run the overall best.
	SameAsBest bool `json:"same_as_best"`
	// Note explains a substitution.
	Note string `json:"note,omitempty"`
}

// Choice summarises one message size.
type Choice struct {
	// Collective is empty for the broadcast in files from before the
	// other collectives.
	Collective Collective `json:"collective,omitempty"`
	Ranks      int        `json:"ranks"`
	Bytes      int        `json:"size_bytes"`
	Best       Pick       `json:"best"`
	// Baseline is Open MPI's fixed decision measured at this size.
	Baseline Pick `json:"baseline"`
	// Speedup is baseline / best.
	Speedup float64 `json:"speedup"`
	// BestBlind is the best algorithm that uses neither a topology nor a
	// performance model.
	BestBlind *Pick      `json:"best_topology_blind,omitempty"`
	OMPI      *LibChoice `json:"ompi,omitempty"`
	MPICH     *LibChoice `json:"mpich,omitempty"`
}

// Outputs are the files of a tuning run, rendered.
type Outputs struct {
	// Decision is the broadcast's decision table (nil when the broadcast
	// was not tuned); Decisions has every tuned collective's.
	Decision  *coll.Decision
	Decisions map[Collective]*coll.Decision
	OMPIConf  string
	OMPIJSON  []byte
	MPICHJSON []byte
	Report    *Report
}

// Decide makes every output from the measurements (one or more
// collectives and communicator sizes). t is the full topology (restricted
// per size for MPICH's smp equivalence and the decision's validation);
// header lines go into the Open MPI file's comments. The rule files hold
// every collective measured.
func Decide(rep *Report, t *topo.Topology, header []string) (*Outputs, error) {
	if len(rep.Measurements) == 0 {
		return nil, fmt.Errorf("tune: no measurements")
	}
	rep.Choices = nil
	out := &Outputs{Report: rep, Decisions: map[Collective]*coll.Decision{}}
	var osecs []OMPISection
	var msecs []MPICHSection
	for _, k := range Collectives {
		var sizes []int
		seen := map[int]bool{}
		for _, m := range rep.Measurements {
			if m.Collective.orBcast() == k && !seen[m.Ranks] {
				seen[m.Ranks] = true
				sizes = append(sizes, m.Ranks)
			}
		}
		if len(sizes) == 0 {
			continue
		}
		slices.Sort(sizes)
		var dblocks []SizeRanges
		var oblocks []OMPIBlock
		var mblocks []MPICHBlock
		for _, q := range sizes {
			var ms []Measurement
			for _, m := range rep.Measurements {
				if m.Collective.orBcast() == k && m.Ranks == q {
					ms = append(ms, m)
				}
			}
			tq, err := Restrict(t, q)
			if err != nil {
				return nil, err
			}
			d, err := decideOne(rep, k, q, ms, tq)
			if err != nil {
				return nil, fmt.Errorf("tune: %s, %d ranks: %w", k, q, err)
			}
			dblocks = append(dblocks, SizeRanges{Ranks: q, Ranges: d.all})
			if d.ompi != nil {
				oblocks = append(oblocks, OMPIBlock{Ranks: q, Rules: d.ompi})
			}
			if d.mpich != nil {
				mblocks = append(mblocks, MPICHBlock{Ranks: q, Ranges: d.mpich})
			}
		}
		dec, err := Decision(dblocks)
		if err != nil {
			return nil, err
		}
		if err := dec.Validate(t); err != nil {
			return nil, fmt.Errorf("tune: %s decision table: %w", k, err)
		}
		out.Decisions[k] = dec
		if k == Bcast {
			out.Decision = dec
		}
		if len(oblocks) > 0 {
			osecs = append(osecs, OMPISection{Collective: k, Blocks: oblocks})
		}
		if len(mblocks) > 0 {
			msecs = append(msecs, MPICHSection{Collective: k, Blocks: mblocks})
		}
	}
	if len(out.Decisions) == 0 {
		return nil, fmt.Errorf("tune: no measurements of a known collective")
	}
	var err error
	if len(osecs) > 0 {
		if out.OMPIConf, err = WriteOMPIRules(header, osecs); err != nil {
			return nil, err
		}
		if out.OMPIJSON, err = WriteOMPIJSONRules(osecs); err != nil {
			return nil, err
		}
	}
	if len(msecs) > 0 {
		if out.MPICHJSON, err = WriteMPICHRules(msecs); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// DecisionFile is the file name of collective k's decision table:
// decision.json for the broadcast (as before the other collectives),
// decision-NAME.json for the others.
func DecisionFile(k Collective) string {
	if k.orBcast() == Bcast {
		return "decision.json"
	}
	return "decision-" + strings.ReplaceAll(string(k), "_", "-") + ".json"
}

type decided struct {
	all   []Range
	ompi  []OMPIRule
	mpich []MPICHRange
}

// decideOne makes the choices of collective k on one communicator size q
// and appends them to rep.Choices.
func decideOne(rep *Report, k Collective, q int, ms []Measurement, t *topo.Topology) (*decided, error) {
	notBase := func(a coll.Algorithm) bool { return a.Name != Baseline.Name }
	if len(Best(ms, notBase)) == 0 {
		return nil, fmt.Errorf("no successful measurement")
	}
	base := Best(ms, func(a coll.Algorithm) bool { return a.Name == Baseline.Name })
	blind := Best(ms, func(a coll.Algorithm) bool { return notBase(a) && IsBlind(a) })
	// The overall choice may be the baseline itself when it wins.
	all := Best(ms, nil)
	levelName := func(l int) string {
		if t == nil {
			return ""
		}
		if l == 0 {
			l = coll.DefaultLevel(t) + 1
		}
		if l < 1 || l > len(t.Levels) {
			return ""
		}
		return t.Levels[l-1].Name
	}
	// Times of one library's own implementation (BenchConfig.Library)
	// say nothing about another's.
	lib := ""
	for _, m := range ms {
		lib = cmp.Or(lib, m.Library)
	}
	ompiOK := func(a coll.Algorithm) bool {
		_, ok := OMPIEquivalentFor(k, a, q)
		return ok && (lib == "" || lib == "openmpi")
	}
	mpichOK := func(a coll.Algorithm) bool {
		_, _, ok := MPICHEquivalentFor(k, a, q, levelName)
		return ok && (lib == "" || lib == "mpich")
	}
	ompiBest := OMPIPicks(ms, ompiOK)
	mpichBest := Best(ms, mpichOK)
	pickAt := func(ps []Pick, n int) *Pick {
		for i := range ps {
			if ps[i].Bytes == n {
				return &ps[i]
			}
		}
		return nil
	}
	for _, b := range all {
		c := Choice{Collective: k, Ranks: q, Bytes: b.Bytes, Best: b}
		if bp := pickAt(base, b.Bytes); bp != nil {
			c.Baseline = *bp
			c.Speedup = bp.MeanS / b.MeanS
		}
		c.BestBlind = pickAt(blind, b.Bytes)
		if o := pickAt(ompiBest, b.Bytes); o != nil {
			r, _ := OMPIEquivalentFor(k, o.Algorithm, q)
			lc := &LibChoice{Algorithm: o.Algorithm, Label: o.Label, Library: fmt.Sprintf("coll_tuned %s %d (faninout %d, segsize %d)", k, r.Alg, r.FanInOut, r.SegBytes), MeanS: o.MeanS, Exact: true, SameAsBest: o.Algorithm == b.Algorithm}
			if !lc.SameAsBest {
				lc.Note = fmt.Sprintf("best %s has no Open MPI equivalent or ties with fewer segments; the Open MPI choice is %.3gx slower", b.Label, o.MeanS/b.MeanS)
			}
			c.OMPI = lc
		}
		if m := pickAt(mpichBest, b.Bytes); m != nil {
			name, exact, _ := MPICHEquivalentFor(k, m.Algorithm, q, levelName)
			lc := &LibChoice{Algorithm: m.Algorithm, Label: m.Label, Library: name, MeanS: m.MeanS, Exact: exact, SameAsBest: m.Algorithm == b.Algorithm}
			if !lc.SameAsBest {
				lc.Note = fmt.Sprintf("best %s has no MPICH equivalent; fastest MPICH-expressible algorithm is %.3gx slower", b.Label, m.MeanS/b.MeanS)
			}
			if !exact {
				lc.Note += "; " + name + " only approximates " + m.Label
			}
			c.MPICH = lc
		}
		rep.Choices = append(rep.Choices, c)
	}
	d := &decided{all: Ranges(all)}
	if len(ompiBest) > 0 {
		rules, err := OMPIRulesFor(k, q, Ranges(ompiBest))
		if err != nil {
			return nil, err
		}
		d.ompi = rules
	}
	for _, r := range Ranges(mpichBest) {
		name, _, _ := MPICHEquivalentFor(k, r.Algorithm, q, levelName)
		// Neighbouring ranges may map to the same MPICH algorithm.
		if n := len(d.mpich); n > 0 && d.mpich[n-1].Algorithm == name {
			d.mpich[n-1].BelowBytes = r.BelowBytes
			continue
		}
		d.mpich = append(d.mpich, MPICHRange{FromBytes: r.FromBytes, BelowBytes: r.BelowBytes, Algorithm: name})
	}
	return d, nil
}

// WriteFile writes the report alone to path (atomically): what an
// interrupted run keeps, its measurements without choices.
func (r *Report) WriteFile(path string) error {
	b, err := json.MarshalIndent(sanitize(r), "", " ")
	if err != nil {
		return err
	}
	return atomicfile.WriteFile(path, append(b, '\n'))
}

// WriteAll writes the outputs into dir: ompi-rules.conf, ompi-rules.json,
// mpich-coll.json, one decision table per collective (DecisionFile) and
// bench.json, each atomically.
func (o *Outputs) WriteAll(dir string) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	var written []string
	put := func(name string, data []byte) error {
		path := filepath.Join(dir, name)
		if err := atomicfile.WriteFile(path, data); err != nil {
			return err
		}
		written = append(written, path)
		return nil
	}
	rb, err := json.MarshalIndent(sanitize(o.Report), "", " ")
	if err != nil {
		return nil, err
	}
	var files []outFile
	for _, k := range Collectives {
		d := o.Decisions[k]
		if d == nil && k == Bcast {
			d = o.Decision
		}
		if d == nil {
			continue
		}
		db, err := d.Marshal()
		if err != nil {
			return nil, err
		}
		files = append(files, outFile{DecisionFile(k), db})
	}
	files = append(files, outFile{"bench.json", append(rb, '\n')})
	if o.OMPIConf != "" {
		files = append(files, outFile{"ompi-rules.conf", []byte(o.OMPIConf)}, outFile{"ompi-rules.json", o.OMPIJSON})
	}
	if o.MPICHJSON != nil {
		files = append(files, outFile{"mpich-coll.json", o.MPICHJSON})
	}
	for _, f := range files {
		if err := put(f.name, f.data); err != nil {
			return written, err
		}
	}
	return written, nil
}

type outFile struct {
	name string
	data []byte
}

// sanitize replaces NaN statistics (no valid repetition) by zero so the
// report stays valid JSON; Kept = 0 tells such entries apart.
func sanitize(r *Report) *Report {
	c := *r
	c.Measurements = append([]Measurement(nil), r.Measurements...)
	for i := range c.Measurements {
		s := &c.Measurements[i].Stats
		for _, f := range []*float64{&s.MeanS, &s.MinS, &s.MaxS, &s.VarS2, &s.Median} {
			if math.IsNaN(*f) || math.IsInf(*f, 0) {
				*f = 0
			}
		}
	}
	return &c
}
