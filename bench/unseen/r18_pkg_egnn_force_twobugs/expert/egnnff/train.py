import torch
import torch.nn.functional as F

from .config import describe, get_config
from .data import iterate_batches, make_dataset
from .model import EGNNPotential


def energy_and_forces(model, b):
    pos = b["pos"].requires_grad_(True)
    energy = model(b["h"], pos, b["edge_index"], b["batch"], b["n_graphs"])
    forces = -torch.autograd.grad(energy.sum(), pos, create_graph=True)[0]
    return energy, forces


def run_epoch(model, mols, cfg, g, opt=None):
    e_err, f_err, n_mol, n_atom = 0.0, 0.0, 0, 0
    for b in iterate_batches(mols, cfg.batch_mols, cfg.n_species, g):
        energy, forces = energy_and_forces(model, b)
        if opt is not None:
            loss = (cfg.energy_weight * F.mse_loss(energy, b["energy"])
                    + cfg.force_weight * F.mse_loss(forces, b["forces"]))
            opt.zero_grad()
            loss.backward()
            opt.step()
        e_err += (energy.detach() - b["energy"]).abs().sum().item()
        f_err += (forces.detach() - b["forces"]).abs().sum().item()
        n_mol += b["n_graphs"]
        n_atom += b["forces"].numel()
    return e_err / n_mol, f_err / n_atom


def main():
    cfg = get_config()
    torch.manual_seed(cfg.seed)
    g = torch.Generator().manual_seed(cfg.seed)
    mols = make_dataset(cfg, g)
    train, val = mols[: int(0.75 * len(mols))], mols[int(0.75 * len(mols)):]
    model = EGNNPotential(cfg.n_species, cfg.hidden, cfg.n_layers)
    opt = torch.optim.Adam(model.parameters(), lr=cfg.lr)
    print(describe(cfg))
    for epoch in range(cfg.epochs):
        tr_e, tr_f = run_epoch(model, train, cfg, g, opt)
        va_e, va_f = run_epoch(model, val, cfg, g)
        print(f"epoch {epoch} train E_mae {tr_e:.5f} F_mae {tr_f:.5f} | val E_mae {va_e:.5f} F_mae {va_f:.5f}")
    w = torch.cat([p.detach().flatten() for p in model.parameters()])
    print(f"final val F_mae {va_f:.5f} param_norm {w.norm():.5f}")


if __name__ == "__main__":
    main()
