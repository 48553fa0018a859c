// sluice-protocol-vectors DIR: writes the control protocol's test vectors and their manifest
// into DIR (testdata/protocol/ in the repository).
#include <iostream>
#include <string>

#include "protocol/vectors.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: sluice-protocol-vectors DIR\n";
    return 2;
  }
  const sluice::Status status = sluice::brokerd::protocol::vectors::WriteAll(argv[1]);
  if (!status.ok()) {
    std::cerr << status.ToString() << "\n";
    return 1;
  }
  return 0;
}
