"""mnist_hogwild.py — PyTorch's Hogwild example (pytorch/examples, mnist_hogwild): several
processes train one model whose parameters live in shared memory, each with its own
optimizer and data order, without locks. The model, the training loop and the process
handling are the example's code with `import tensor as torch`; the data is Fashion-MNIST
read from the local IDX files (fashion_mnist.py's reader) instead of torchvision's MNIST.
The example itself, unchanged but for its imports, is mnist_hogwild/main.py and train.py
beside this file once tools/port_upstream.py has ported them (README.md; test_examples_pt.py
runs it beside PyTorch); this variant trains on the real Fashion-MNIST with an accuracy bar
(test_multiprocessing.py).

    make lib/libtensor.so
    python3 bindings/python/examples/mnist_hogwild.py [--num-processes 2] [--epochs 1]
                                                      [--train-size N] [--expect 0.8]
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import tensor as torch  # noqa: E402   (or: import torch)
import tensor.multiprocessing as mp  # noqa: E402
from fashion_mnist import fashion_mnist  # noqa: E402

nn = torch.nn
F = torch.nn.functional
optim = torch.optim


class Net(nn.Module):
    def __init__(self):
        super(Net, self).__init__()
        self.conv1 = nn.Conv2d(1, 10, kernel_size=5)
        self.conv2 = nn.Conv2d(10, 20, kernel_size=5)
        self.conv2_drop = nn.Dropout2d()
        self.fc1 = nn.Linear(320, 50)
        self.fc2 = nn.Linear(50, 10)

    def forward(self, x):
        x = F.relu(F.max_pool2d(self.conv1(x), 2))
        x = F.relu(F.max_pool2d(self.conv2_drop(self.conv2(x)), 2))
        x = x.view(-1, 320)
        x = F.relu(self.fc1(x))
        x = F.dropout(x, training=self.training)
        x = self.fc2(x)
        return F.log_softmax(x, dim=1)


def train(rank, args, model, device, dataset, dataloader_kwargs):
    torch.manual_seed(args.seed + rank)
    torch.set_num_threads(1)                 # the processes are the parallelism
    train_loader = torch.utils.data.DataLoader(dataset, **dataloader_kwargs)
    optimizer = optim.SGD(model.parameters(), lr=args.lr, momentum=args.momentum)
    for epoch in range(1, args.epochs + 1):
        train_epoch(epoch, args, model, device, train_loader, optimizer)


def train_epoch(epoch, args, model, device, data_loader, optimizer):
    model.train()
    pid = os.getpid()
    for batch_idx, (data, target) in enumerate(data_loader):
        optimizer.zero_grad()
        output = model(data.to(device))
        loss = F.nll_loss(output, target.to(device))
        loss.backward()
        optimizer.step()
        if batch_idx % args.log_interval == 0:
            print('{}\tTrain Epoch: {} [{}/{} ({:.0f}%)]\tLoss: {:.6f}'.format(
                pid, epoch, batch_idx * len(data), len(data_loader.dataset),
                100. * batch_idx / len(data_loader), loss.item()), flush=True)


def test(args, model, device, dataset, dataloader_kwargs):
    torch.manual_seed(args.seed)
    test_loader = torch.utils.data.DataLoader(dataset, **dataloader_kwargs)
    model.eval()
    test_loss = 0
    correct = 0
    with torch.no_grad():
        for data, target in test_loader:
            output = model(data.to(device))
            test_loss += F.nll_loss(output, target.to(device), reduction='sum').item()
            pred = output.max(1)[1]
            correct += pred.eq(target.to(device)).sum().item()
    test_loss /= len(test_loader.dataset)
    print('\nTest set: Average loss: {:.4f}, Accuracy: {}/{} ({:.0f}%)\n'.format(
        test_loss, correct, len(test_loader.dataset), 100. * correct / len(test_loader.dataset)))
    return correct / len(test_loader.dataset)


def subset(dataset, n):
    x, y = dataset.tensors
    return torch.utils.data.TensorDataset(x[:n].clone(), y[:n].clone())


if __name__ == '__main__':
    parser = argparse.ArgumentParser(description='PyTorch MNIST Hogwild Example')
    parser.add_argument('--batch-size', type=int, default=64)
    parser.add_argument('--test-batch-size', type=int, default=1000)
    parser.add_argument('--epochs', type=int, default=1)
    parser.add_argument('--lr', type=float, default=0.01)
    parser.add_argument('--momentum', type=float, default=0.5)
    parser.add_argument('--seed', type=int, default=1)
    parser.add_argument('--log-interval', type=int, default=50)
    parser.add_argument('--num-processes', type=int, default=2)
    parser.add_argument('--data', default=os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', '..',
                                                       'data', 'fashion-mnist'))
    parser.add_argument('--train-size', type=int, default=60000, help='train on the first N images')
    parser.add_argument('--test-size', type=int, default=10000)
    parser.add_argument('--expect', type=float, default=0.0, help='exit 1 below this test accuracy')
    args = parser.parse_args()

    device = torch.device("cpu")
    dataset1 = subset(fashion_mnist(args.data, True), args.train_size)
    dataset2 = subset(fashion_mnist(args.data, False), args.test_size)
    kwargs = {'batch_size': args.batch_size, 'shuffle': True}

    torch.manual_seed(args.seed)
    mp.set_start_method('spawn', force=True)

    model = Net().to(device)
    model.share_memory()  # gradients are allocated lazily, so they are not shared here

    processes = []
    for rank in range(args.num_processes):
        p = mp.Process(target=train, args=(rank, args, model, device, dataset1, kwargs))
        # We first train the model across `num_processes` processes
        p.start()
        processes.append(p)
    for p in processes:
        p.join()
    if any(p.exitcode for p in processes):
        sys.exit("a training process failed")

    # Once training is complete, we can test the model
    accuracy = test(args, model, device, dataset2, {'batch_size': args.test_batch_size})
    sys.exit(0 if accuracy >= args.expect else 1)
