"""E(n)-equivariant GNN (Satorras et al., 2021), E_GCL layer as in egnn_clean."""
import torch
import torch.nn as nn


def unsorted_segment_sum(data, segment_ids, num_segments):
    result = data.new_zeros((num_segments, data.size(1)))
    result.scatter_add_(0, segment_ids.unsqueeze(-1).expand(-1, data.size(1)), data)
    return result


def unsorted_segment_mean(data, segment_ids, num_segments):
    result = unsorted_segment_sum(data, segment_ids, num_segments)
    count = unsorted_segment_sum(torch.ones_like(data), segment_ids, num_segments)
    return result / count.clamp(min=1)


class E_GCL(nn.Module):
    def __init__(self, hidden, coords_weight=1.0):
        super().__init__()
        act = nn.SiLU()
        self.coords_weight = coords_weight
        self.edge_mlp = nn.Sequential(nn.Linear(2 * hidden + 1, hidden), act, nn.Linear(hidden, hidden), act)
        self.node_mlp = nn.Sequential(nn.Linear(2 * hidden, hidden), act, nn.Linear(hidden, hidden))
        last = nn.Linear(hidden, 1, bias=False)
        nn.init.xavier_uniform_(last.weight, gain=0.001)
        self.coord_mlp = nn.Sequential(nn.Linear(hidden, hidden), act, last)

    def coord2radial(self, edge_index, coord):
        row, col = edge_index
        coord_diff = coord[row] - coord[col]
        radial = torch.sum(coord_diff ** 2, 1).unsqueeze(1)
        return radial, coord_diff

    def edge_model(self, source, target, radial):
        return self.edge_mlp(torch.cat([source, target, radial], dim=1))

    def coord_model(self, coord, edge_index, coord_diff, edge_feat):
        row, _ = edge_index
        trans = coord_diff * self.coord_mlp(edge_feat)
        agg = unsorted_segment_mean(trans, row, num_segments=coord.size(0))
        coord += agg * self.coords_weight
        return coord

    def node_model(self, h, edge_index, edge_feat):
        row, _ = edge_index
        agg = unsorted_segment_sum(edge_feat, row, num_segments=h.size(0))
        return h + self.node_mlp(torch.cat([h, agg], dim=1))

    def forward(self, h, edge_index, coord):
        row, col = edge_index
        radial, coord_diff = self.coord2radial(edge_index, coord)
        edge_feat = self.edge_model(h[row], h[col], radial)
        coord = self.coord_model(coord, edge_index, coord_diff, edge_feat)
        h = self.node_model(h, edge_index, edge_feat)
        return h, coord


class EGNNPotential(nn.Module):
    """Energy model; forces are obtained as -dE/dx by the caller."""

    def __init__(self, n_species, hidden, n_layers):
        super().__init__()
        self.embed = nn.Linear(n_species, hidden)
        self.layers = nn.ModuleList(E_GCL(hidden) for _ in range(n_layers))
        self.readout = nn.Sequential(nn.Linear(hidden, hidden), nn.SiLU(), nn.Linear(hidden, 1))

    def forward(self, h, pos, edge_index, batch, n_graphs):
        h = self.embed(h)
        x = pos
        for layer in self.layers:
            h, x = layer(h, edge_index, x)
        atom_e = self.readout(h)
        energy = atom_e.new_zeros(n_graphs, 1).index_add_(0, batch, atom_e)
        return energy.squeeze(-1)
