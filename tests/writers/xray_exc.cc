// -f xray test program: C++ exceptions thrown through a recursion and
// caught two levels up, three times (tests/writers/xray.sh): the unwinder
// leaves the frames of thrower() by a jump into catcher()'s landing pad.
#include <cstdio>
#include <stdexcept>

__attribute__((noinline)) int thrower(int n)
{
	if (n == 0)
		throw std::runtime_error("bottom");
	return thrower(n - 1) + 1;
}

__attribute__((noinline)) int catcher(int n)
{
	try {
		return thrower(n);
	} catch (const std::exception &) {
		return -1;
	}
}

int main()
{
	int s = 0;

	for (int i = 0; i < 3; i++)
		s += catcher(5 + i);	// 6, 7 and 8 calls of thrower
	std::printf("%d\n", s);
	return 0;
}
