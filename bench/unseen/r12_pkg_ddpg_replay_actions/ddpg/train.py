import torch

from .agent import DDPGAgent
from .buffer import ReplayBuffer
from .config import DDPGConfig
from .env import PointMass


@torch.no_grad()
def evaluate(agent, seed, episodes=4, max_steps=40):
    env = PointMass(seed=seed, max_steps=max_steps)
    total, final = 0.0, 0.0
    for _ in range(episodes):
        obs, done = env.reset(), False
        while not done:
            obs, r, done = env.step(agent.actor(obs))
            total += r
        final += obs[:2].norm().item()
    return total / episodes, final / episodes


def main():
    cfg = DDPGConfig.from_args()
    torch.manual_seed(cfg.seed)
    env = PointMass(seed=cfg.seed, max_steps=cfg.max_steps)
    agent = DDPGAgent(env.obs_dim, env.act_dim, cfg)
    buffer = ReplayBuffer(cfg.buffer_size, seed=cfg.seed)

    steps = 0
    for ep in range(1, cfg.episodes + 1):
        obs, done, ep_ret = env.reset(), False, 0.0
        c_losses, a_losses = [], []
        while not done:
            if steps < cfg.warmup_steps:
                action = torch.rand(env.act_dim) * 2 - 1
            else:
                action = agent.act(obs, cfg.expl_noise)
            next_obs, reward, done = env.step(action.tolist())
            buffer.push(obs, action, reward, next_obs, done)
            obs, ep_ret, steps = next_obs, ep_ret + reward, steps + 1
            if steps >= cfg.warmup_steps:
                c, a = agent.update(buffer.sample(cfg.batch_size))
                c_losses.append(c)
                a_losses.append(a)
        if ep % 4 == 0:
            ret, dist = evaluate(agent, seed=1000 + ep)
            print(f"episode {ep:2d} return {ep_ret:9.4f} critic {sum(c_losses) / len(c_losses):.5f} "
                  f"actor {sum(a_losses) / len(a_losses):.5f} eval_return {ret:9.4f} eval_final_dist {dist:.4f}")


if __name__ == "__main__":
    main()
