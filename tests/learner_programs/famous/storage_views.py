# How lectures explain views: a view shares its base's storage; a copy does not
import torch

a = torch.arange(6.)
b = a.view(2, 3)
c = a[2:]
print(a.untyped_storage().data_ptr() == b.untyped_storage().data_ptr())
print(c.untyped_storage().data_ptr() == a.untyped_storage().data_ptr())
print(c.data_ptr() - a.data_ptr(), c.element_size(), c.storage_offset())
print(a.untyped_storage().nbytes(), a.untyped_storage().size(), len(a.untyped_storage()))
t = b.t()
print(t.is_contiguous(), t.untyped_storage().data_ptr() == a.untyped_storage().data_ptr())
d = t.contiguous()
print(d.untyped_storage().data_ptr() == a.untyped_storage().data_ptr())
print(a.storage().tolist())
print(a.storage().size(), a.storage().element_size(), a.storage().dtype)
b[0, 1] = 10
print(a)
