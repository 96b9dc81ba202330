package netaware

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"

	"netaware/coll"
	"netaware/discover"
	"netaware/model"
	"netaware/topo"
)

// DiscoverOptions configure a discovery (level of effort, blind mode, the
// measurement parameters); DefaultDiscoverOptions is the standard level.
type DiscoverOptions = discover.Options

// DefaultDiscoverOptions are the options of 'netaware discover'.
func DefaultDiscoverOptions() DiscoverOptions { return discover.DefaultOptions() }

// Discovery is what Discover finds, on every rank.
type Discovery struct {
	// Topology is the levels and the latency tree (topology.json).
	Topology *topo.Topology
	// Model is the performance model per group pair (model.json); nil
	// when the level of effort measured no PLogP (discover.Fast).
	Model *model.File
	// Outcome is everything discovery measured and inferred (dataset,
	// distances, dendrogram, phases), on rank 0 only: what a program
	// saves or reports.
	Outcome *discover.Outcome
}

// Discover finds out how the ranks are connected and how fast they talk
// (package discover: identities, RTT tree inference, PLogP, clustering),
// hands the topology and the model to every rank, and makes this Comm's
// collectives use them. Every rank calls it with the same options.
func (c *Comm) Discover(ctx context.Context, opt DiscoverOptions) (*Discovery, error) {
	o, err := discover.Run(ctx, c.c, opt)
	if c.Rank() != 0 && err != nil {
		return nil, err
	}
	d := &Discovery{Outcome: o}
	var payload [2][]byte
	if c.Rank() == 0 {
		if err == nil {
			d.Model, err = modelOf(o)
		}
		if err == nil {
			payload, err = encodeDiscovery(o.Topology, d.Model)
		}
	}
	// Rank 0 always sends the header, so that the other ranks learn of its
	// failure instead of waiting for a topology that never comes.
	t, m, err := c.shareDiscovery(ctx, payload, err)
	if err != nil {
		return nil, err
	}
	d.Topology = t
	if c.Rank() != 0 {
		d.Model = m
	}
	if err := c.SetTopology(d.Topology); err != nil {
		return nil, err
	}
	if d.Model != nil {
		if err := c.SetModel(d.Model); err != nil {
			return nil, err
		}
	}
	return d, nil
}

// modelOf is the model 'netaware discover' writes as model.json: PLogP
// (and what derives from it) per pair of the groups the campaign measured.
func modelOf(o *discover.Outcome) (*model.File, error) {
	if o.Dataset == nil || o.Dataset.PLogP == nil {
		return nil, nil
	}
	m, err := model.FromDataset(o.Dataset, o.Dataset.PLogP.Schedule.Groups)
	if err != nil {
		return nil, fmt.Errorf("model: %w", err)
	}
	return m, nil
}

func encodeDiscovery(t *topo.Topology, m *model.File) ([2][]byte, error) {
	var out [2][]byte
	var tb bytes.Buffer
	if err := t.Write(&tb); err != nil {
		return out, fmt.Errorf("topology: %w", err)
	}
	out[0] = tb.Bytes()
	if m != nil {
		b, err := m.Marshal()
		if err != nil {
			return out, fmt.Errorf("model: %w", err)
		}
		out[1] = b
	}
	return out, nil
}

// shareDiscovery broadcasts rank 0's topology and model (or its failure)
// along a binomial tree: a header of three integers (failed, topology
// length, model length), then the documents or the error text.
func (c *Comm) shareDiscovery(ctx context.Context, payload [2][]byte, failure error) (*topo.Topology, *model.File, error) {
	s, err := coll.Binomial(c.Size(), 0)
	if err != nil {
		return nil, nil, err
	}
	hdr := make([]byte, 24)
	if c.Rank() == 0 {
		body := append(append([]byte(nil), payload[0]...), payload[1]...)
		failed := uint64(0)
		if failure != nil {
			failed, body = 1, []byte(failure.Error())
			payload = [2][]byte{body, nil}
		}
		binary.LittleEndian.PutUint64(hdr[0:], failed)
		binary.LittleEndian.PutUint64(hdr[8:], uint64(len(payload[0])))
		binary.LittleEndian.PutUint64(hdr[16:], uint64(len(payload[1])))
		if err := s.Bcast(ctx, c.c, hdr); err != nil {
			return nil, nil, errors.Join(failure, err)
		}
		if err := s.Bcast(ctx, c.c, body); err != nil {
			return nil, nil, errors.Join(failure, err)
		}
		if failure != nil {
			return nil, nil, failure
		}
		return decodeDiscovery(payload[0], payload[1])
	}
	if err := s.Bcast(ctx, c.c, hdr); err != nil {
		return nil, nil, err
	}
	failed := binary.LittleEndian.Uint64(hdr[0:])
	lt, lm := binary.LittleEndian.Uint64(hdr[8:]), binary.LittleEndian.Uint64(hdr[16:])
	const maxDoc = 1 << 34 // a header no rank 0 sends: refuse, do not allocate
	if lt > maxDoc || lm > maxDoc {
		return nil, nil, fmt.Errorf("discovery from rank 0: header claims %d+%d bytes", lt, lm)
	}
	body := make([]byte, lt+lm)
	if err := s.Bcast(ctx, c.c, body); err != nil {
		return nil, nil, err
	}
	if failed != 0 {
		return nil, nil, fmt.Errorf("discovery failed on rank 0: %s", body)
	}
	return decodeDiscovery(body[:lt], body[lt:])
}

func decodeDiscovery(tb, mb []byte) (*topo.Topology, *model.File, error) {
	t, err := topo.Parse(tb)
	if err != nil {
		return nil, nil, fmt.Errorf("topology from rank 0: %w", err)
	}
	if len(mb) == 0 {
		return t, nil, nil
	}
	m, err := model.Parse(mb)
	if err != nil {
		return nil, nil, fmt.Errorf("model from rank 0: %w", err)
	}
	return t, m, nil
}
