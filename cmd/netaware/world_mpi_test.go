//go:build mpi

package main

import "testing"

// TestMPIWorldSelection: an MPI build joins the MPI world only when an MPI
// launcher started it, and not under netaware launch, --coordinator or
// NETAWARE_MPI=off.
func TestMPIWorldSelection(t *testing.T) {
	for _, v := range []string{"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_RANK", "PMI_SIZE", "SLURM_PROCID", "NETAWARE_RANK", "NETAWARE_MPI"} {
		t.Setenv(v, "")
	}
	cases := []struct {
		env         map[string]string
		coordinator string
		want        string
	}{
		{nil, "", "tcp"},
		{map[string]string{"OMPI_COMM_WORLD_SIZE": "4"}, "", "mpi"},
		{map[string]string{"PMI_RANK": "0", "PMI_SIZE": "4"}, "", "mpi"},
		{map[string]string{"SLURM_PROCID": "3"}, "", "mpi"},
		{map[string]string{"PMI_RANK": "0", "NETAWARE_RANK": "0"}, "", "tcp"},
		{map[string]string{"OMPI_COMM_WORLD_SIZE": "4", "NETAWARE_MPI": "off"}, "", "tcp"},
		{map[string]string{"OMPI_COMM_WORLD_SIZE": "4"}, "node1:7777", "tcp"},
	}
	for i, c := range cases {
		for k, v := range c.env {
			t.Setenv(k, v)
		}
		if got := liveWorldKind(&worldFlags{coordinator: c.coordinator}); got != c.want {
			t.Errorf("case %d %v coordinator %q: world %s, want %s", i, c.env, c.coordinator, got, c.want)
		}
		for k := range c.env {
			t.Setenv(k, "")
		}
	}
}
