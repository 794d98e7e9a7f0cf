/* Fixture tools for the protocol tests and the official conformance
 * suite. All are TB_TOOL_TEST_ONLY: listed only with the test switch. */
#ifndef TB_TEST_TOOLS_H
#define TB_TEST_TOOLS_H

/* Registers the fixture tools; returns 0 or -1. */
int tb_test_tools_register(void);

#endif /* TB_TEST_TOOLS_H */
