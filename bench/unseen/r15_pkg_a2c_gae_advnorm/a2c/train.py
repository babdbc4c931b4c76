"""python -m a2c.train  -- synchronous advantage actor-critic with GAE."""
import argparse

import torch

from .agent import ActorCritic
from .buffer import RolloutBuffer
from .env import ChainEnv


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--updates", type=int, default=60)
    p.add_argument("--n-envs", type=int, default=8)
    p.add_argument("--rollout", type=int, default=16)
    p.add_argument("--gamma", type=float, default=0.95)
    p.add_argument("--lam", type=float, default=0.9)
    p.add_argument("--lr", type=float, default=0.01)
    p.add_argument("--vf-coef", type=float, default=0.5)
    p.add_argument("--ent-coef", type=float, default=0.01)
    p.add_argument("--seed", type=int, default=0)
    return p.parse_args()


def main():
    args = parse_args()
    torch.manual_seed(args.seed)
    env = ChainEnv(args.n_envs)
    agent = ActorCritic(env.L + 1, 2)
    opt = torch.optim.Adam(agent.parameters(), lr=args.lr)
    obs = env.obs()
    ep_ret = torch.zeros(args.n_envs)
    finished = []
    for update in range(1, args.updates + 1):
        buf = RolloutBuffer()
        for _ in range(args.rollout):
            dist, value = agent(obs)
            action = dist.sample()
            obs, reward, done = env.step(action)
            buf.add(dist.log_prob(action), value, reward, done, dist.entropy())
            ep_ret += reward
            finished.extend(ep_ret[done.bool()].tolist())
            ep_ret[done.bool()] = 0.0
        with torch.no_grad():
            _, last_value = agent(obs)

        adv, returns = buf.compute_gae(last_value, args.gamma, args.lam)
        adv.sub_(adv.mean()).div_(adv.std() + 1e-8)
        logps, values, ent = buf.tensors()
        policy_loss = -(logps * adv).mean()
        value_loss = (returns - values).pow(2).mean()
        loss = policy_loss + args.vf_coef * value_loss - args.ent_coef * ent.mean()
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(agent.parameters(), 0.5)
        opt.step()
        if update % 10 == 0:
            recent = finished[-32:]
            print(f"update {update:3d} loss {loss.item():.4f} value_loss {value_loss.item():.4f} "
                  f"mean_return {sum(recent) / max(len(recent), 1):.4f}")
    with torch.no_grad():
        dist, v = agent(env.obs())
    print(f"final p_right {dist.probs[:, 1].mean().item():.4f} value {v.mean().item():.4f}")


if __name__ == "__main__":
    main()
