// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {IERC20} from "@openzeppelin/contracts/token/ERC20/IERC20.sol";
import {SafeERC20} from "@openzeppelin/contracts/token/ERC20/utils/SafeERC20.sol";
import {AccessControlUpgradeable} from "@openzeppelin/contracts-upgradeable/access/AccessControlUpgradeable.sol";
import {Initializable} from "@openzeppelin/contracts-upgradeable/proxy/utils/Initializable.sol";
import {UUPSUpgradeable} from "@openzeppelin/contracts-upgradeable/proxy/utils/UUPSUpgradeable.sol";

/// @title Treasury
/// @notice Holds the credit token for the service. A deposit names the account it funds by an opaque reference the
/// service hands out (`accountRef`); the service credits its ledger from the `Deposited` event. Withdrawals are sent
/// by the service's relayer after it has debited the ledger, each under a reference that can pay only once.
/// @dev UUPS proxy (ERC-1967), like the OracleRegistry. The token is fixed at initialize and assumed to be a plain
/// ERC-20 (what is pulled is what arrives: no fee-on-transfer or rebasing token).
contract Treasury is Initializable, AccessControlUpgradeable, UUPSUpgradeable {
    using SafeERC20 for IERC20;

    bytes32 public constant RELAYER_ROLE = keccak256("RELAYER_ROLE");
    bytes32 public constant UPGRADER_ROLE = keccak256("UPGRADER_ROLE");

    IERC20 private _token;
    /// @dev Withdrawal references already paid: a retried withdrawal reverts instead of paying twice.
    mapping(bytes32 => bool) private _paidWithdrawals;

    event Deposited(bytes32 indexed accountRef, address indexed from, uint256 amount);
    /// @dev `withdrawalRef` is the service's reference for the withdrawal (`reference` is a reserved word).
    event Withdrawn(bytes32 indexed withdrawalRef, address indexed to, uint256 amount);

    error InvalidToken(address token);
    error ZeroAddress();
    error ZeroAmount();
    error ZeroAccountRef();
    error ZeroWithdrawalRef();
    error WithdrawalRefUsed(bytes32 withdrawalRef);
    error InsufficientTreasuryBalance(uint256 balance, uint256 amount);

    /// @custom:oz-upgrades-unsafe-allow constructor
    constructor() {
        _disableInitializers();
    }

    function initialize(address token_, address admin, address relayer) external initializer {
        if (token_.code.length == 0) revert InvalidToken(token_);
        if (admin == address(0) || relayer == address(0)) revert ZeroAddress();
        __AccessControl_init();
        __UUPSUpgradeable_init();
        _token = IERC20(token_);
        _grantRole(DEFAULT_ADMIN_ROLE, admin);
        _grantRole(UPGRADER_ROLE, admin);
        _grantRole(RELAYER_ROLE, relayer);
    }

    /// @notice Implementation version; clients assert it before relying on an interface.
    function version() external pure virtual returns (string memory) {
        return "1.0.0";
    }

    function token() external view returns (address) {
        return address(_token);
    }

    function isWithdrawalRefUsed(bytes32 withdrawalRef) external view returns (bool) {
        return _paidWithdrawals[withdrawalRef];
    }

    /// @notice Pulls `amount` of the token from the caller (who approved this contract first) for the account
    /// `accountRef`.
    function deposit(bytes32 accountRef, uint256 amount) external {
        if (accountRef == bytes32(0)) revert ZeroAccountRef();
        if (amount == 0) revert ZeroAmount();
        _token.safeTransferFrom(msg.sender, address(this), amount);
        emit Deposited(accountRef, msg.sender, amount);
    }

    /// @notice Pays `amount` to `to` under `withdrawalRef`, once.
    function withdraw(address to, uint256 amount, bytes32 withdrawalRef) external onlyRole(RELAYER_ROLE) {
        if (to == address(0)) revert ZeroAddress();
        if (amount == 0) revert ZeroAmount();
        if (withdrawalRef == bytes32(0)) revert ZeroWithdrawalRef();
        if (_paidWithdrawals[withdrawalRef]) revert WithdrawalRefUsed(withdrawalRef);
        uint256 balance = _token.balanceOf(address(this));
        if (balance < amount) revert InsufficientTreasuryBalance(balance, amount);
        // Marked before the transfer, so not even a re-entering token can pay one reference twice.
        _paidWithdrawals[withdrawalRef] = true;
        _token.safeTransfer(to, amount);
        emit Withdrawn(withdrawalRef, to, amount);
    }

    function _authorizeUpgrade(address) internal override onlyRole(UPGRADER_ROLE) {}

    /// @dev Room for later versions' storage.
    uint256[48] private __gap;
}
