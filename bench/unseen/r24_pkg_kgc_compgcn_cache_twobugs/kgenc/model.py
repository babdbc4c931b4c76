"""A small CompGCN encoder (Vashishth et al. 2020) with a DistMult decoder.

The encoder enriches *all* entity and relation representations with message passing
over the training graph.  Since every batch of a link-prediction epoch needs the same
enriched tables, they are computed once and buffered until the parameters change
(same design as pykeen's ``CombinedCompGCNRepresentations``).
"""
import torch
import torch.nn as nn


class CompGCNLayer(nn.Module):
    def __init__(self, dim, dropout):
        super().__init__()
        self.w_in = nn.Linear(dim, dim, bias=False)
        self.w_out = nn.Linear(dim, dim, bias=False)
        self.w_self = nn.Linear(dim, dim, bias=False)
        self.w_rel = nn.Linear(dim, dim, bias=False)
        self.self_loop = nn.Parameter(torch.zeros(dim))
        self.drop = nn.Dropout(dropout)
        self.norm = nn.LayerNorm(dim)

    def forward(self, x_e, x_r, edge_index, edge_type):
        src, dst = edge_index
        n_fwd = edge_type.shape[0] // 2
        # composition phi(e_s, r) = e_s - r  (TransE-style)
        msg = x_e[src] - x_r[edge_type]
        msg = torch.cat([self.w_in(msg[:n_fwd]), self.w_out(msg[n_fwd:])], dim=0)
        agg = torch.zeros_like(x_e).index_add(0, dst, msg)
        deg = torch.zeros(x_e.shape[0]).index_add(0, dst, torch.ones(dst.shape[0])).clamp(min=1)
        out = agg / deg.unsqueeze(1) + self.w_self(x_e - self.self_loop)
        out = torch.tanh(self.norm(self.drop(out)))
        return out, self.w_rel(x_r)


class CompGCNDistMult(nn.Module):
    def __init__(self, num_entities, num_relations, dim, num_layers, dropout, triples):
        super().__init__()
        self.entity = nn.Embedding(num_entities, dim)
        self.relation = nn.Embedding(2 * num_relations, dim)  # + inverse relations
        nn.init.xavier_uniform_(self.entity.weight)
        nn.init.xavier_uniform_(self.relation.weight)
        self.layers = nn.ModuleList(CompGCNLayer(dim, dropout) for _ in range(num_layers))
        h, r, t = triples.t()
        edge_index = torch.cat([torch.stack([h, t]), torch.stack([t, h])], dim=1)
        edge_type = torch.cat([r, r + num_relations])
        self.register_buffer("edge_index", edge_index)
        self.register_buffer("edge_type", edge_type)
        # buffer of enriched representations
        self.enriched_representations = None

    def post_parameter_update(self):
        # invalidate enriched embeddings
        self.enriched_representations = None

    def enrich(self):
        if self.enriched_representations is None:
            x_e, x_r = self.entity.weight, self.relation.weight
            for layer in self.layers:
                x_e, x_r = layer(x_e, x_r, self.edge_index, self.edge_type)
            self.enriched_representations = (x_e, x_r)
        return self.enriched_representations

    def score_hrt(self, hrt):
        x_e, x_r = self.enrich()
        h, r, t = x_e[hrt[:, 0]], x_r[hrt[:, 1]], x_e[hrt[:, 2]]
        return (h * r * t).sum(-1)

    def score_t(self, hr):
        x_e, x_r = self.enrich()
        return (x_e[hr[:, 0]] * x_r[hr[:, 1]]) @ x_e.t()
