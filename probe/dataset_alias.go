package probe

import "netaware/dataset"

// The dataset format moved to package dataset (issue 14): model, report and
// the CLI read dataset.json without importing the measurement engine. The
// names below keep code written against probe compiling while parallel
// branches merge.

// Deprecated: use dataset.Version; kept while parallel branches merge.
const DatasetVersion = dataset.Version

// Deprecated: use the dataset package's types; kept while parallel branches merge.
type (
	Dataset           = dataset.Dataset
	World             = dataset.World
	Section[P, R any] = dataset.Section[P, R]
	PairResult[R any] = dataset.PairResult[R]
	RTTSection        = dataset.RTTSection
	PLogPSection      = dataset.PLogPSection
	HockneySection    = dataset.HockneySection
	BandwidthSection  = dataset.BandwidthSection
	ScheduleSpec      = dataset.ScheduleSpec
	Group             = dataset.Group
	JoinMode          = dataset.JoinMode
	RTTParams         = dataset.RTTParams
	RTTResult         = dataset.RTTResult
	PLogPParams       = dataset.PLogPParams
	PLogPSize         = dataset.PLogPSize
	PLogPSamples      = dataset.PLogPSamples
	PLogPResult       = dataset.PLogPResult
	LogGP             = dataset.LogGP
	HockneyParams     = dataset.HockneyParams
	HockneyResult     = dataset.HockneyResult
	HockneySize       = dataset.HockneySize
	BandwidthParams   = dataset.BandwidthParams
	BandwidthResult   = dataset.BandwidthResult
	Link              = dataset.Link
	PatternParams     = dataset.PatternParams
	PatternGenerator  = dataset.PatternGenerator
	PatternResult     = dataset.PatternResult
	PatternSection    = dataset.PatternSection
	Summary           = dataset.Summary
)

// Deprecated: use dataset.JoinOne and dataset.JoinZip; kept while parallel branches merge.
const (
	JoinOne = dataset.JoinOne
	JoinZip = dataset.JoinZip
)

// Deprecated: use dataset.ParseJoinMode; kept while parallel branches merge.
func ParseJoinMode(s string) (JoinMode, error) { return dataset.ParseJoinMode(s) }

// Deprecated: use dataset.Load; kept while parallel branches merge.
func Load(path string) (*Dataset, error) { return dataset.Load(path) }

// Deprecated: use dataset.Parse; kept while parallel branches merge.
func Parse(b []byte) (*Dataset, error) { return dataset.Parse(b) }
