"""Node memory module (TGN, Rossi et al. 2020): last-message aggregation + GRU updater."""
import torch
import torch.nn as nn


class TimeEncoder(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.lin = nn.Linear(1, dim)

    def forward(self, dt):
        return torch.cos(self.lin(dt.unsqueeze(-1)))


class NodeMemory(nn.Module):
    """Keeps one memory vector per node and the last raw message addressed to it.

    ``forward(n_id)`` returns the memory of ``n_id`` *after* applying the pending
    messages (so the loss can train the message function and the GRU);
    ``update_state`` persists that memory and stores the new events as pending messages.
    """

    def __init__(self, num_nodes, msg_dim, memory_dim, time_dim):
        super().__init__()
        self.num_nodes = num_nodes
        self.time_enc = TimeEncoder(time_dim)
        raw_dim = 2 * memory_dim + msg_dim + time_dim
        self.gru = nn.GRUCell(raw_dim, memory_dim)
        self.register_buffer("memory", torch.zeros(num_nodes, memory_dim))
        self.register_buffer("last_update", torch.zeros(num_nodes))
        self.register_buffer("msg_other", torch.zeros(num_nodes, dtype=torch.long))
        self.register_buffer("msg_feat", torch.zeros(num_nodes, msg_dim))
        self.register_buffer("msg_t", torch.zeros(num_nodes))
        self.register_buffer("has_msg", torch.zeros(num_nodes, dtype=torch.bool))

    def reset_state(self):
        self.memory.zero_()
        self.last_update.zero_()
        self.has_msg.zero_()

    def detach(self):
        """Cut the memory's history after an optimizer step."""
        self.memory.detach_()

    def _updated(self, n_id):
        mem = self.memory[n_id]
        pending = self.has_msg[n_id]
        other = self.memory[self.msg_other[n_id]]
        dt = self.msg_t[n_id] - self.last_update[n_id]
        raw = torch.cat([mem, other, self.msg_feat[n_id], self.time_enc(dt)], dim=-1)
        new = self.gru(raw, mem)
        return torch.where(pending.unsqueeze(-1), new, mem)

    def forward(self, n_id):
        return self._updated(n_id)

    def update_state(self, src, dst, t, msg):
        n_id = torch.cat([src, dst]).unique()
        new_mem = self._updated(n_id)
        self.memory[n_id] = new_mem
        self.last_update[n_id] = torch.where(self.has_msg[n_id], self.msg_t[n_id], self.last_update[n_id])
        # last-message aggregator: later events overwrite earlier ones
        for a, b in ((src, dst), (dst, src)):
            self.msg_other[a] = b
            self.msg_feat[a] = msg
            self.msg_t[a] = t
            self.has_msg[a] = True
