"""torch.utils.data.distributed.DistributedSampler: each rank's share of a dataset."""
import math

from .sampler import Sampler


class DistributedSampler(Sampler):
    """Rank ``rank`` of ``num_replicas`` gets every num_replicas-th index of one permutation
    (``randperm`` with a generator seeded ``seed + epoch``, so every rank draws the same one;
    ``set_epoch`` reshuffles), padded by repeating the first indices so all ranks get as
    many (or, with ``drop_last``, cut to a multiple). As PyTorch's."""

    def __init__(self, dataset, num_replicas=None, rank=None, shuffle=True, seed=0, drop_last=False):
        from ... import distributed as dist
        if num_replicas is None or rank is None:
            if not dist.is_initialized():
                raise RuntimeError("Requires distributed package to be available")
            num_replicas = dist.get_world_size() if num_replicas is None else num_replicas
            rank = dist.get_rank() if rank is None else rank
        if rank >= num_replicas or rank < 0:
            raise ValueError(f"Invalid rank {rank}, rank should be in the interval [0, {num_replicas - 1}]")
        self.dataset, self.num_replicas, self.rank = dataset, num_replicas, rank
        self.epoch, self.drop_last, self.shuffle, self.seed = 0, drop_last, shuffle, seed
        if self.drop_last and len(self.dataset) % self.num_replicas != 0:
            self.num_samples = math.ceil((len(self.dataset) - self.num_replicas) / self.num_replicas)
        else:
            self.num_samples = math.ceil(len(self.dataset) / self.num_replicas)
        self.total_size = self.num_samples * self.num_replicas

    def __iter__(self):
        import tensor  # the package (the sampler is imported while it loads)
        if self.shuffle:
            g = tensor.Generator()
            g.manual_seed(self.seed + self.epoch)
            indices = tensor.randperm(len(self.dataset), generator=g).tolist()
        else:
            indices = list(range(len(self.dataset)))
        if not self.drop_last:
            padding_size = self.total_size - len(indices)
            if padding_size <= len(indices):
                indices += indices[:padding_size]
            else:
                indices += (indices * math.ceil(padding_size / len(indices)))[:padding_size]
        else:
            indices = indices[:self.total_size]
        assert len(indices) == self.total_size
        indices = indices[self.rank:self.total_size:self.num_replicas]
        assert len(indices) == self.num_samples
        return iter(indices)

    def __len__(self):
        return self.num_samples

    def set_epoch(self, epoch):
        self.epoch = epoch
