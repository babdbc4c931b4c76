"""Synthetic 'molecules': a few atoms of two species with a Morse pair potential.

Reference energies and forces come from the analytic potential, forces as the
negative gradient of the energy with respect to the positions.
"""
import torch

# Morse parameters per species pair (D, a, r0)
_MORSE = torch.tensor([[[1.0, 1.5, 1.1], [0.8, 1.3, 1.3]],
                       [[0.8, 1.3, 1.3], [0.6, 1.1, 1.5]]])


def morse_energy(pos, species):
    diff = pos[:, None, :] - pos[None, :, :]
    r = (diff.pow(2).sum(-1) + 1e-9).sqrt()
    p = _MORSE[species[:, None], species[None, :]]
    D, a, r0 = p[..., 0], p[..., 1], p[..., 2]
    e = D * (1 - torch.exp(-a * (r - r0))).pow(2) - D
    mask = ~torch.eye(pos.shape[0], dtype=torch.bool)
    return 0.5 * e[mask].sum()


def make_dataset(cfg, g):
    mols = []
    for _ in range(cfg.n_mol):
        species = torch.randint(0, cfg.n_species, (cfg.n_atoms,), generator=g)
        # jittered ring so atoms are not on top of each other
        ang = torch.arange(cfg.n_atoms) * (6.2832 / cfg.n_atoms)
        ring = torch.stack([ang.cos(), ang.sin(), torch.zeros(cfg.n_atoms)], 1) * 1.3
        pos = ring + 0.25 * torch.randn(cfg.n_atoms, 3, generator=g)
        with torch.enable_grad():
            p = pos.clone().requires_grad_(True)
            e = morse_energy(p, species)
            f = -torch.autograd.grad(e, p)[0]
        mols.append({"pos": pos, "species": species, "energy": e.detach(), "forces": f})
    return mols


def collate(mols, n_species):
    pos, h, batch, rows, cols, energy, forces = [], [], [], [], [], [], []
    offset = 0
    for k, m in enumerate(mols):
        n = m["pos"].shape[0]
        pos.append(m["pos"])
        h.append(torch.nn.functional.one_hot(m["species"], n_species).float())
        batch.append(torch.full((n,), k, dtype=torch.long))
        idx = torch.arange(n) + offset
        r, c = torch.meshgrid(idx, idx, indexing="ij")
        keep = r != c
        rows.append(r[keep])
        cols.append(c[keep])
        energy.append(m["energy"])
        forces.append(m["forces"])
        offset += n
    return {
        "pos": torch.cat(pos), "h": torch.cat(h), "batch": torch.cat(batch),
        "edge_index": (torch.cat(rows), torch.cat(cols)),
        "energy": torch.stack(energy), "forces": torch.cat(forces), "n_graphs": len(mols),
    }


def iterate_batches(mols, batch_mols, n_species, g):
    order = torch.randperm(len(mols), generator=g).tolist()
    for i in range(0, len(order), batch_mols):
        yield collate([mols[j] for j in order[i:i + batch_mols]], n_species)
