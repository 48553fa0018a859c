"""What the package takes from the host besides pyarrow: GCC's libatomic, whose absence the
import names with the package that brings it (python/README.md)."""

import pytest

from sluice import segment


def test_a_libatomic_that_does_not_load_is_named_with_the_package_to_install():
    with pytest.raises(ImportError, match=r"libatomic-absent\.so\.1.*apt-get install libatomic1"):
        segment._load_libatomic("libatomic-absent.so.1")


def test_the_hosts_libatomic_gives_the_operations_the_reader_uses():
    library = segment._load_libatomic("libatomic.so.1")
    assert library.__atomic_compare_exchange_8 is not None
    assert library.__atomic_exchange_4 is not None
