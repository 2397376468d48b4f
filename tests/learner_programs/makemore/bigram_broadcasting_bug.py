# makemore part 1 (Karpathy): the broadcasting lesson, P / P.sum(1) without keepdim normalises
# the columns instead of the rows; names.txt made inline (56 names)
import torch

words = [
  'emma', 'olivia', 'ava', 'isabella', 'sophia', 'charlotte', 'mia', 'amelia', 'harper',
  'evelyn', 'abigail', 'emily', 'elizabeth', 'mila', 'ella', 'avery', 'sofia', 'camila', 'aria',
  'scarlett', 'victoria', 'madison', 'luna', 'grace', 'chloe', 'penelope', 'layla', 'riley',
  'zoey', 'nora', 'lily', 'eleanor', 'hannah', 'lillian', 'addison', 'aubrey', 'ellie',
  'stella', 'natalie', 'zoe', 'leah', 'hazel', 'violet', 'aurora', 'savannah', 'audrey',
  'brooklyn', 'bella', 'claire', 'skylar', 'jack', 'quinn', 'xavier', 'wyatt', 'oliver', 'henry',
]
chars = sorted(list(set(''.join(words))))
stoi = {s:i+1 for i,s in enumerate(chars)}
stoi['.'] = 0

N = torch.zeros((27, 27), dtype=torch.int32)
for w in words:
  chs = ['.'] + list(w) + ['.']
  for ch1, ch2 in zip(chs, chs[1:]):
    N[stoi[ch1], stoi[ch2]] += 1

P = N.float()
print(P.sum(1, keepdim=True).shape)
print(P.sum(1).shape)

# 27, 27
# 27,  1  # broadcasting rules: align on the right, stretch the 1
good = P / P.sum(1, keepdim=True)
print(good[0].sum(), good.sum(0)[:3])

# 27, 27
#     27  # the 27 becomes a row vector 1, 27: every column is divided, not every row
bad = P / P.sum(1)
print(bad[0].sum(), bad.sum(0)[:3])
print(torch.allclose(good, bad))
