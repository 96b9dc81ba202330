package tune

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"netaware/coll"
)

// OMPIBcastID is the coll_tuned collective id of MPI_Bcast in rule files.
const OMPIBcastID = 7 // = Bcast.OMPIID()

// OMPIRule is one message-size rule of Open MPI's coll/tuned: from
// FromBytes on, run algorithm Alg (0: the fixed decision) with the given
// fan-in/out and segment size.
type OMPIRule struct {
	FromBytes int
	Alg       int
	FanInOut  int
	SegBytes  int
	// Note is a comment for people (our algorithm's name).
	Note string
}

// OMPIEquivalent maps one of our algorithms onto Open MPI's coll/tuned
// bcast (algorithm id, fan-in/out, segment size), when Open MPI runs the
// same schedule: linear 1, chain 2 (fan-out 1; k-chain: fan-out k),
// pipeline 3, split-binary 4, binary 5, binomial 6, knomial 7 (radix 4,
// Open MPI's coll_tuned_bcast_algorithm_knomial_radix default: the rules
// file cannot set it), scatter-allgather 8, scatter-allgather-ring 9, and
// ompi-fixed 0 (the fixed decision). Topology-aware algorithms and
// binary-swap have no equivalent.
func OMPIEquivalent(a coll.Algorithm) (OMPIRule, bool) {
	r := OMPIRule{SegBytes: a.SegSize, Note: a.String()}
	switch a.Name {
	case "ompi-fixed":
		r.Alg, r.SegBytes = 0, 0
	case "linear":
		r.Alg = coll.OMPIBasicLinear
		r.SegBytes = 0
	case "chain":
		r.Alg, r.FanInOut = coll.OMPIChain, 1
	case "k-chain":
		r.Alg, r.FanInOut = coll.OMPIChain, a.K
		if a.K == 0 {
			r.FanInOut = 4 // coll's default number of chains
		}
	case "pipeline":
		r.Alg = coll.OMPIPipeline
	case "split-binary":
		r.Alg = coll.OMPISplitBinaryTree
	case "binary":
		r.Alg = coll.OMPIBinaryTree
	case "binomial":
		r.Alg = coll.OMPIBinomial
	case "knomial":
		if a.K != 0 && a.K != 4 {
			return OMPIRule{}, false
		}
		r.Alg = coll.OMPIKnomial
	case "scatter-allgather":
		r.Alg, r.SegBytes = coll.OMPIScatterAllgather, 0
	case "scatter-allgather-ring":
		r.Alg, r.SegBytes = coll.OMPIScatterAllgatherRng, 0
	default:
		return OMPIRule{}, false
	}
	return r, true
}

// OMPIRules turns size ranges of Open MPI-expressible broadcast
// algorithms into message rules; see OMPIRulesFor.
func OMPIRules(rs []Range) ([]OMPIRule, error) { return OMPIRulesFor(Bcast, 0, rs) }

// OMPIRulesFor turns size ranges of algorithms Open MPI can run for
// collective k on p ranks into message rules; the first starts at 0 as
// coll/tuned requires.
func OMPIRulesFor(k Collective, p int, rs []Range) ([]OMPIRule, error) {
	var out []OMPIRule
	for i, r := range rs {
		o, ok := OMPIEquivalentFor(k, r.Algorithm, p)
		if !ok {
			return nil, fmt.Errorf("tune: %s has no Open MPI coll/tuned %s equivalent", r.Algorithm, k)
		}
		o.FromBytes = r.FromBytes
		if i == 0 {
			o.FromBytes = 0
		}
		out = append(out, o)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("tune: no rules")
	}
	return out, nil
}

// OMPIBlock is the message rules for communicators of (at least) Ranks.
type OMPIBlock struct {
	Ranks int
	Rules []OMPIRule
}

// OMPISection is the rules of one collective for a rules file.
type OMPISection struct {
	Collective Collective
	Blocks     []OMPIBlock
}

// WriteOMPIClassic renders the rules of the broadcast alone; see
// WriteOMPIRules.
func WriteOMPIClassic(header []string, blocks []OMPIBlock) (string, error) {
	return WriteOMPIRules(header, []OMPISection{{Collective: Bcast, Blocks: blocks}})
}

// WriteOMPIRules renders the sections (one per collective, written in
// ascending collective id) in coll/tuned's classic rules-file format,
// which Open MPI 4.x and 5.x read:
//
//	C            number of collectives
//	7            collective id (OMPIID: bcast 7, allreduce 2, ...)
//	N            number of communicator sizes
//	P            communicator size
//	K            number of message sizes
//	S A F G      message size, algorithm, fan-in/out, segment size
//	...          (the next collective id, its sizes, ...)
//
// Numbers are plain decimal (the reader's "%li" would take a leading 0 as
// octal); comments start with '#', which the reader skips to the end of
// the line. Open MPI 4.x applies a block to communicators of at least P
// ranks (up to the next block); the 5.x/6.x reader gives a block the sizes
// from the previous block's P up to its own P - 1 (the first from 0, the
// last open-ended), so the two agree on a single block for communicators
// of P ranks or more, and differ with several.
func WriteOMPIRules(header []string, sections []OMPISection) (string, error) {
	if len(sections) == 0 {
		return "", fmt.Errorf("tune: no collectives")
	}
	secs := slices.Clone(sections)
	slices.SortStableFunc(secs, func(a, b OMPISection) int { return a.Collective.OMPIID() - b.Collective.OMPIID() })
	var b strings.Builder
	for _, h := range header {
		fmt.Fprintf(&b, "# %s\n", oneLine(h))
	}
	fmt.Fprintf(&b, "%d # number of collectives\n", len(secs))
	for i, sec := range secs {
		k := sec.Collective.orBcast()
		if _, err := ParseCollective(string(k)); err != nil {
			return "", fmt.Errorf("tune: %w", err)
		}
		if i > 0 && secs[i-1].Collective.orBcast() == k {
			return "", fmt.Errorf("tune: %s given twice", k)
		}
		if len(sec.Blocks) == 0 {
			return "", fmt.Errorf("tune: %s: no communicator sizes", k)
		}
		fmt.Fprintf(&b, "%d # collective id: %s\n", k.OMPIID(), k)
		fmt.Fprintf(&b, "%d # number of communicator sizes\n", len(sec.Blocks))
		last := 0
		for _, bl := range sec.Blocks {
			if bl.Ranks < 1 || bl.Ranks <= last {
				return "", fmt.Errorf("tune: %s: communicator sizes must ascend from 1 (got %d after %d)", k, bl.Ranks, last)
			}
			last = bl.Ranks
			if len(bl.Rules) == 0 || bl.Rules[0].FromBytes != 0 {
				return "", fmt.Errorf("tune: %s, communicator size %d: the first message rule must start at 0 bytes", k, bl.Ranks)
			}
			fmt.Fprintf(&b, "%d # communicator size\n", bl.Ranks)
			fmt.Fprintf(&b, "%d # number of message sizes\n", len(bl.Rules))
			prev := -1
			for _, r := range bl.Rules {
				if r.FromBytes <= prev || r.Alg < 0 || r.FanInOut < 0 || r.SegBytes < 0 {
					return "", fmt.Errorf("tune: %s, communicator size %d: bad rule %+v", k, bl.Ranks, r)
				}
				prev = r.FromBytes
				fmt.Fprintf(&b, "%d %d %d %d # %s\n", r.FromBytes, r.Alg, r.FanInOut, r.SegBytes, oneLine(r.Note))
			}
		}
	}
	return b.String(), nil
}

func oneLine(s string) string { return strings.NewReplacer("\n", " ", "\r", " ").Replace(s) }

// OMPIJSON is Open MPI's JSON rules file (coll/tuned reads it first and
// falls back to the classic format; added for Open MPI 6.0, absent from
// 4.x and 5.0.x, which read only the classic file).
type OMPIJSON struct {
	RuleFileVersion int                        `json:"rule_file_version"`
	Module          string                     `json:"module"`
	Collectives     map[string][]OMPIJSONComms `json:"collectives"`
}

// OMPIJSONComms is the rules of one communicator-size range.
type OMPIJSONComms struct {
	CommSizeMin int            `json:"comm_size_min"`
	CommSizeMax int            `json:"comm_size_max,omitempty"`
	Rules       []OMPIJSONRule `json:"rules"`
}

// OMPIJSONRule is one message-size rule. The reader's field names are
// msg_size_min, msg_size_max (or "inf"), alg, faninout, seg_size, reqs.
type OMPIJSONRule struct {
	MsgSizeMin int `json:"msg_size_min"`
	MsgSizeMax any `json:"msg_size_max"`
	Alg        int `json:"alg"`
	FanInOut   int `json:"faninout,omitempty"`
	SegSize    int `json:"seg_size,omitempty"`
}

// WriteOMPIJSON renders the broadcast's blocks alone; see
// WriteOMPIJSONRules.
func WriteOMPIJSON(blocks []OMPIBlock) ([]byte, error) {
	return WriteOMPIJSONRules([]OMPISection{{Collective: Bcast, Blocks: blocks}})
}

// WriteOMPIJSONRules renders the sections as the JSON rules file with the
// classic file's meaning under Open MPI 4.x: block i covers communicators
// from its size up to the next block's size minus one, the last one every
// larger communicator too (no comm_size_max); each rule covers the message
// sizes up to the next rule's start. Collectives are keyed by name.
func WriteOMPIJSONRules(sections []OMPISection) ([]byte, error) {
	doc := OMPIJSON{RuleFileVersion: 3, Module: "tuned", Collectives: map[string][]OMPIJSONComms{}}
	for _, sec := range sections {
		k := sec.Collective.orBcast()
		if _, dup := doc.Collectives[string(k)]; dup {
			return nil, fmt.Errorf("tune: %s given twice", k)
		}
		doc.Collectives[string(k)] = []OMPIJSONComms{}
		for i, bl := range sec.Blocks {
			c := OMPIJSONComms{CommSizeMin: bl.Ranks}
			if i+1 < len(sec.Blocks) {
				c.CommSizeMax = sec.Blocks[i+1].Ranks - 1
			}
			for i, r := range bl.Rules {
				jr := OMPIJSONRule{MsgSizeMin: r.FromBytes, MsgSizeMax: "inf", Alg: r.Alg, FanInOut: r.FanInOut, SegSize: r.SegBytes}
				if i+1 < len(bl.Rules) {
					jr.MsgSizeMax = bl.Rules[i+1].FromBytes - 1
				}
				c.Rules = append(c.Rules, jr)
			}
			doc.Collectives[string(k)] = append(doc.Collectives[string(k)], c)
		}
	}
	b, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}
